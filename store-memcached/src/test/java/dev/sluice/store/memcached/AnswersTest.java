package dev.sluice.store.memcached;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import net.spy.memcached.internal.BulkGetFuture;
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

  /**
   * With one of spymemcached's futures in the batch, what follows runs on its listener executor
   * even when every future is answered already, never in the caller's thread (an event loop's), and
   * only after the moves listed after it.
   */
  @Test
  void whatFollowsRunsOnSpymemcachedsListenerThreadAfterEveryMove() throws Exception {
    ExecutorService listeners =
        Executors.newSingleThreadExecutor(r -> new Thread(r, "test-listener"));
    try {
      for (boolean answeredFirst : new boolean[] {true, false}) {
        CountDownLatch latch = new CountDownLatch(1);
        BulkGetFuture<Object> bulk =
            new BulkGetFuture<>(new HashMap<>(), List.of(), latch, listeners);
        CompletableFuture<Object> before = new CompletableFuture<>();
        CompletableFuture<Object> after = new CompletableFuture<>();
        List<Future<?>> sent = List.of(before, new OneOfBulk(bulk, "k"), after);
        if (answeredFirst) {
          before.complete(1);
          after.complete(1);
          latch.countDown();
          bulk.signalComplete();
        }
        CompletableFuture<String> ranOn = new CompletableFuture<>();
        Answers.whenAll(sent, () -> ranOn.complete(Thread.currentThread().getName()));
        if (!answeredFirst) {
          latch.countDown();
          bulk.signalComplete();
          // The listener runs on its thread, finds the last move pending and waits for it.
          long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
          while (after.getNumberOfDependents() == 0 && System.nanoTime() < deadline) {
            Thread.onSpinWait();
          }
          assertEquals(1, after.getNumberOfDependents(), "waits for the last move");
          assertFalse(ranOn.isDone(), "ran before the moves");
          after.complete(1);
          before.complete(1);
        }
        assertEquals(
            answeredFirst ? "test-listener" : Thread.currentThread().getName(),
            ranOn.get(5, TimeUnit.SECONDS),
            "answered first: the listener thread; else whoever answered the last move");
      }
    } finally {
      listeners.shutdownNow();
    }
  }

  @Test
  void aFutureWithoutACompletionListenerIsRefusedAtOnce() {
    Future<?> unknown = new java.util.concurrent.FutureTask<>(() -> 1);
    AtomicInteger runs = new AtomicInteger();
    assertThrows(
        IllegalArgumentException.class,
        () -> Answers.whenAll(List.of(new CompletableFuture<>(), unknown), runs::incrementAndGet));
    assertEquals(0, runs.get());
  }

  @Test
  void withNoFutureWhatFollowsRunsAtOnce() {
    AtomicInteger runs = new AtomicInteger();
    Answers.whenAll(List.of(), runs::incrementAndGet);
    assertEquals(1, runs.get());
  }
}
