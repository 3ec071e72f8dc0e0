package dev.sluice.store.memcached;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@link Answers#whenAll} runs what follows once, after the last of its futures, in whatever order
 * they complete: one listener at a time, on the last one still pending.
 */
class AnswersTest {

  @Test
  void whatFollowsRunsOnceAfterTheLastFutureWhateverTheOrder() {
    Random random = new Random(20261126);
    for (int round = 0; round < 500; round++) {
      int n = 1 + random.nextInt(8);
      List<CompletableFuture<Object>> futures = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        futures.add(new CompletableFuture<>());
      }
      // Some answered before anyone waits.
      List<CompletableFuture<Object>> order = new ArrayList<>(futures);
      Collections.shuffle(order, random);
      int early = random.nextInt(n + 1);
      for (int i = 0; i < early; i++) {
        order.get(i).complete(i);
      }
      AtomicInteger runs = new AtomicInteger();
      AtomicInteger doneWhenRun = new AtomicInteger(-1);
      List<Future<?>> sent = new ArrayList<>(futures);
      Answers.whenAll(
          sent,
          () -> {
            runs.incrementAndGet();
            doneWhenRun.set((int) futures.stream().filter(CompletableFuture::isDone).count());
          });
      for (int i = early; i < n; i++) {
        assertEquals(0, runs.get(), "ran with " + (n - i) + " of " + n + " pending");
        order.get(i).complete(i);
      }
      assertEquals(1, runs.get(), "once");
      assertEquals(n, doneWhenRun.get(), "after every future");
    }
  }

  @Test
  void withNoFutureWhatFollowsRunsAtOnce() {
    AtomicInteger runs = new AtomicInteger();
    Answers.whenAll(List.of(), runs::incrementAndGet);
    assertEquals(1, runs.get());
  }
}
