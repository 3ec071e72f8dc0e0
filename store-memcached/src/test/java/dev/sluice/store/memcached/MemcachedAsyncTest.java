package dev.sluice.store.memcached;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.OnStoreFailure;
import dev.sluice.Outcome;
import dev.sluice.http.RequestInfo;
import dev.sluice.http.RequestLimiter;
import dev.sluice.http.Rule;
import dev.sluice.http.RuleSet;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterUpdate;
import dev.sluice.spi.Counts;
import dev.sluice.spi.LateAnswers;
import dev.sluice.spi.StoreTimeoutException;
import dev.sluice.testkit.MemcachedServer;
import dev.sluice.testkit.NonBlocking;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The store's asynchronous increment sends its operations and returns: the caller, on a thread that
 * BlockHound forbids to block, never waits on memcached, and the counts are the blocking path's.
 */
class MemcachedAsyncTest {

  /** Threads BlockHound treats as an event loop's: any blocking call on them fails. */
  static final String NON_BLOCKING = "sluice-test-loop";

  private static MemcachedServer server;
  private static final AtomicInteger PREFIX = new AtomicInteger();
  private MemcachedCounterStore store;

  @BeforeAll
  static void start() {
    NonBlocking.forbidOn(NON_BLOCKING);
    server = MemcachedServer.start();
  }

  @AfterAll
  static void stop() {
    if (server != null) {
      server.close();
    }
  }

  @AfterEach
  void closeStore() {
    if (store != null) {
      store.close();
    }
  }

  private MemcachedCounterStore store(Duration timeout) {
    store =
        MemcachedCounterStore.builder()
            .servers(server.address())
            .prefix("async" + PREFIX.incrementAndGet())
            .operationTimeout(timeout)
            .build();
    return store;
  }

  /**
   * Runs {@code work} on a thread of its own that BlockHound forbids to block, as an event loop's
   * task, and returns what it returned; its failure (a blocking call) is rethrown as the cause.
   */
  private static <T> T onLoop(Supplier<T> work) throws Exception {
    CompletableFuture<T> result = new CompletableFuture<>();
    Thread t =
        new Thread(
            () -> {
              try {
                result.complete(work.get());
              } catch (Throwable e) {
                result.completeExceptionally(e);
              }
            },
            NON_BLOCKING);
    t.start();
    t.join(10_000);
    return result.get(0, TimeUnit.SECONDS);
  }

  @Test
  void blockHoundCatchesABlockingCallOnTheLoop() {
    Exception e =
        assertThrows(
            Exception.class,
            () ->
                onLoop(
                    () -> {
                      try {
                        Thread.sleep(1);
                      } catch (InterruptedException ie) {
                        Thread.currentThread().interrupt();
                      }
                      return null;
                    }));
    assertTrue(String.valueOf(e.getCause()).contains("Blocking call"), e::toString);
  }

  @Test
  void countsAsTheBlockingIncrementWithoutParkingTheCaller() throws Exception {
    MemcachedCounterStore s = store(Duration.ofSeconds(2));
    long w = System.currentTimeMillis() / 60_000;
    List<CounterUpdate> batch =
        List.of(
            new CounterUpdate("r", "k", 60_000, w, 1),
            new CounterUpdate("r", "k", 1_000, w * 60, 2),
            new CounterUpdate("other", "k", 60_000, w, 1));
    s.increment(List.of(new CounterUpdate("r", "k", 60_000, w - 1, 5)));
    for (int i = 1; i <= 3; i++) {
      CompletableFuture<Counts> f = onLoop(() -> s.incrementAsync(batch));
      Counts counts = f.get(5, TimeUnit.SECONDS);
      assertEquals(Counts.of(i, 5, 2L * i, 0, i, 0), counts, "call " + i);
    }
    Counts blocking = s.increment(batch);
    assertEquals(Counts.of(4, 5, 8, 0, 4, 0), blocking);
  }

  @Test
  void aRequestLimiterDecidesOnTheLoopWithoutBlocking() throws Exception {
    MemcachedCounterStore s = store(Duration.ofSeconds(2));
    RequestLimiter limiter =
        limiter(
            s,
            perKey("per-key").tier(3, Duration.ofMinutes(1)),
            perKey("in-flight").concurrency(10, Duration.ofSeconds(30)));
    for (int i = 0; i < 5; i++) {
      Outcome out = new Outcome();
      CompletableFuture<Boolean> f =
          onLoop(() -> limiter.decideAsync(request("k"), out).toCompletableFuture());
      boolean allowed = f.get(5, TimeUnit.SECONDS);
      assertEquals(i < 3, allowed, "request " + i);
      assertFalse(out.storeFailed(), out::toString);
      CompletableFuture<Void> released =
          onLoop(
              () -> {
                limiter.slots(out).release();
                return CompletableFuture.completedFuture(null);
              });
      released.get(5, TimeUnit.SECONDS);
    }
  }

  @Test
  void aStalledServerFailsTheFutureAtTheDeadlineAndTheCallerNeverWaits() throws Exception {
    MemcachedCounterStore s = store(Duration.ofMillis(200));
    long w = System.currentTimeMillis() / 60_000;
    List<CounterUpdate> batch = List.of(new CounterUpdate("stall", "k", 60_000, w, 1));
    s.increment(batch); // warm: the store has been answered once
    server.stall();
    try {
      long t0 = System.nanoTime();
      CompletableFuture<Counts> f = onLoop(() -> s.incrementAsync(batch));
      assertFalse(f.isDone(), "the caller got the future back before any answer");
      CompletionException e = assertThrows(CompletionException.class, f::join);
      long ms = (System.nanoTime() - t0) / 1_000_000;
      assertTrue(StoreTimeoutException.in(e), e::toString);
      assertTrue(ms >= 150 && ms < 2_000, "failed at the deadline, after " + ms + " ms");
    } finally {
      server.resume();
    }
  }

  @Test
  void aTokenBucketMovePastTheDeadlineIsStillWrittenAndAnsweredLate() throws Exception {
    MemcachedCounterStore s = store(Duration.ofMillis(200));
    long w = System.currentTimeMillis() / 60_000;
    List<CounterUpdate> move =
        List.of(new CounterUpdate("late-tb", "k", 60_000, w, 10, 1_000, false, Long.MAX_VALUE));
    assertEquals(1_010, s.increment(move).current(0));
    Counts late =
        LateAnswers.whileStalled(
            server::stall, server::resume, RuntimeException.class, () -> s.increment(move));
    assertEquals(1_020, late.current(0), "the compare-and-set went on once memcached answered");
    assertEquals(1_030, s.increment(move).current(0), "and its write stands");
  }

  @Test
  void aWindowIncrPastTheDeadlineIsAnsweredLateWithItsCount() throws Exception {
    MemcachedCounterStore s = store(Duration.ofMillis(200));
    long w = System.currentTimeMillis() / 60_000;
    s.increment(List.of(new CounterUpdate("late-w", "k", 60_000, w - 1, 7)));
    List<CounterUpdate> batch =
        List.of(
            new CounterUpdate("late-w", "k", 60_000, w, 1),
            new CounterUpdate("late-w", "k", 1_000, w * 60, 2));
    assertEquals(Counts.of(1, 7, 2, 0), s.increment(batch));
    Counts late =
        LateAnswers.whileStalled(
            server::stall, server::resume, RuntimeException.class, () -> s.increment(batch));
    assertEquals(Counts.of(2, 7, 4, 0), late, "each incr's own count, once memcached answered");
    assertEquals(Counts.of(3, 7, 6, 0), s.increment(batch), "and its write stands");
  }

  @Test
  void anAsynchronousIncrPastTheDeadlineIsAnsweredLateWithItsCount() throws Exception {
    MemcachedCounterStore s = store(Duration.ofMillis(200));
    long w = System.currentTimeMillis() / 60_000;
    List<CounterUpdate> batch = List.of(new CounterUpdate("late-async", "k", 60_000, w, 1));
    s.increment(batch);
    Counts late =
        LateAnswers.whileStalled(
            server::stall,
            server::resume,
            CompletionException.class,
            () -> onLoop(() -> s.incrementAsync(batch)).join());
    assertEquals(2, late.current(0), "the incr's own count, once memcached answered");
  }

  /**
   * The memcached store, each late answer it hands over passed on to the limiter through a stage of
   * its own: {@link #taken} counts the late answers the limiter has taken whole.
   */
  static final class Handing implements CounterStore {
    final MemcachedCounterStore store;
    final java.util.concurrent.Semaphore taken = new java.util.concurrent.Semaphore(0);

    Handing(MemcachedCounterStore store) {
      this.store = store;
    }

    @Override
    public Counts increment(List<CounterUpdate> updates) {
      try {
        return store.increment(updates);
      } catch (RuntimeException e) {
        Optional<java.util.concurrent.CompletionStage<Counts>> late =
            StoreTimeoutException.lateCounts(e);
        if (late.isEmpty()) {
          throw e;
        }
        CompletableFuture<Counts> handed = new CompletableFuture<>();
        var unused =
            late.get()
                .whenComplete(
                    (counts, error) -> {
                      // The limiter's own stages run in this thread, before the count.
                      if (error == null) {
                        handed.complete(counts);
                      } else {
                        handed.completeExceptionally(error);
                      }
                      taken.release();
                    });
        throw new StoreTimeoutException(e.getMessage(), handed);
      }
    }

    @Override
    public void decrement(List<CounterUpdate> updates) {
      store.decrement(updates);
    }
  }

  @Test
  void aFailOpenWhoseLateIncrSpendsTheLimitIsNotRepeated() throws Exception {
    Handing s = new Handing(store(Duration.ofMillis(200)));
    RequestLimiter limiter = limiter(s, perKey("late-open").tier(3, Duration.ofMinutes(1)));
    Outcome out = new Outcome();
    for (int i = 0; i < 3; i++) {
      assertTrue(limiter.decide(request("k"), out), "in time: " + i);
    }
    server.stall();
    try {
      assertTrue(limiter.decide(request("k"), out), "past the timeout: failing open");
      assertTrue(out.storeFailed(), out::toString);
    } finally {
      server.resume();
    }
    assertTrue(s.taken.tryAcquire(5, TimeUnit.SECONDS), "the late answer was handed over");
    server.stall();
    try {
      for (int i = 0; i < 3; i++) {
        assertFalse(limiter.decide(request("k"), out), "the late answer spent the limit: " + i);
        assertTrue(out.fromDenyCache(), "refused without asking the stalled store: " + out);
      }
    } finally {
      server.resume();
    }
  }

  @Test
  void aRequestRefusedOnATimeoutGivesBackWhatItsLateIncrCounted() throws Exception {
    Handing s = new Handing(store(Duration.ofMillis(200)));
    RequestLimiter limiter =
        limiter(
            s,
            perKey("late-closed")
                .tier(2, Duration.ofMinutes(1))
                .onStoreFailure(OnStoreFailure.REJECT));
    Outcome out = new Outcome();
    assertTrue(limiter.decide(request("k"), out), "warm: the store has been answered once");
    server.stall();
    try {
      assertFalse(limiter.decide(request("k"), out), "past the timeout: failing closed");
      assertTrue(out.storeFailed(), out::toString);
    } finally {
      server.resume();
    }
    assertTrue(s.taken.tryAcquire(5, TimeUnit.SECONDS), "the late answer was handed over");
    // Memcached answers a connection's operations in order: the refund, sent when the late answer
    // was taken, is applied before this increment is answered.
    s.store.increment(List.of(new CounterUpdate("barrier", "b", 60_000, 1, 1)));
    assertTrue(limiter.decide(request("k"), out), "the refused request took nothing: " + out);
    assertFalse(limiter.decide(request("k"), out));
  }

  /** A rule {@code id} on {@code /api/**}, keyed on the {@code X-Api-Key} header. */
  private static Rule.Builder perKey(String id) {
    return Rule.builder(id).path("/api/**").key("header:X-Api-Key");
  }

  /** A request limiter on {@code store} with {@code rules}. */
  private static RequestLimiter limiter(CounterStore store, Rule.Builder... rules) {
    RuleSet.Builder set = RuleSet.builder();
    for (Rule.Builder rule : rules) {
      set.rule(rule.build());
    }
    return RequestLimiter.builder(store).rules(set.build()).build();
  }

  private static RequestInfo request(String key) {
    return new RequestInfo() {
      @Override
      public String method() {
        return "GET";
      }

      @Override
      public String path() {
        return "/api/x";
      }

      @Override
      public List<String> headers(String name) {
        return name.equalsIgnoreCase("X-Api-Key") ? List.of(key) : List.of();
      }

      @Override
      public Optional<String> remoteAddress() {
        return Optional.of("192.0.2.1");
      }

      @Override
      public Optional<String> principal() {
        return Optional.empty();
      }

      @Override
      public Optional<Object> attribute(String name) {
        return Optional.empty();
      }
    };
  }
}
