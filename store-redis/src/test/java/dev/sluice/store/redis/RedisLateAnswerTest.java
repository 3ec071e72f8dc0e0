package dev.sluice.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.StoreStatus;
import dev.sluice.Tier;
import dev.sluice.spi.CounterBatch;
import dev.sluice.spi.CounterUpdate;
import dev.sluice.spi.Counts;
import dev.sluice.spi.FakeClock;
import dev.sluice.spi.LateAnswers;
import dev.sluice.testkit.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A counting script that Redis answers past the decision's deadline (the server stopped, then let
 * go): the script ran, and its counts reach the limiter late. A key they show over its limit is
 * refused from the deny cache, even while Redis stalls again, and what a refused request was
 * counted is given back.
 */
class RedisLateAnswerTest {

  private static final long W = System.currentTimeMillis() / 60_000;

  private static RedisCounterStore store(RedisServer server) {
    return RedisCounterStore.builder()
        .uri(server.uri())
        .operationTimeout(Duration.ofMillis(50))
        .connectTimeout(Duration.ofSeconds(2))
        .storeClock(false)
        .build();
  }

  /**
   * Returns once Redis has answered every command sent on the store's connection before it, and the
   * limiter has taken those answers: two increments of a counter of their own, one after the other
   * (what the first answer's late taking sent, a refund, goes before the second).
   */
  private static void answered(RedisCounterStore store) {
    List<CounterUpdate> probe = List.of(new CounterUpdate("probe", "p", 60_000, W, 1));
    store.increment(probe);
    store.increment(probe);
  }

  private static RateLimiter.Builder limiter(String algorithm, RedisCounterStore store) {
    RateLimiter.Builder b =
        switch (algorithm) {
          case "fixed" -> RateLimiter.fixedWindow(store).tier(3, Duration.ofMinutes(1));
          case "sliding" -> RateLimiter.slidingWindow(store).tier(3, Duration.ofMinutes(1));
          default -> RateLimiter.tokenBucket(store).tier(new Tier(3, Duration.ofMinutes(1), 3));
        };
    // The clock stands: windows do not end, and nothing refills.
    return b.clock(new FakeClock());
  }

  @ParameterizedTest
  @ValueSource(strings = {"fixed", "sliding", "token bucket"})
  void aFailOpenWhoseLateAnswerSpendsTheLimitIsNotRepeated(String algorithm) {
    try (RedisServer server = RedisServer.start();
        RedisCounterStore store = store(server)) {
      RateLimiter limiter = limiter(algorithm, store).build();
      for (int i = 0; i < 3; i++) {
        assertEquals(StoreStatus.OK, limiter.tryAcquire("client").storeStatus(), "in time: " + i);
      }
      server.pause();
      try {
        Decision open = limiter.tryAcquire("client");
        assertTrue(open.allowed(), "past the timeout: failing open");
        assertEquals(StoreStatus.FAILED_OPEN, open.storeStatus());
      } finally {
        server.resume();
      }
      answered(store);
      server.pause();
      try {
        for (int i = 0; i < 3; i++) {
          Decision d = limiter.tryAcquire("client");
          assertFalse(d.allowed(), "the late answer showed the limit spent: " + i + " " + d);
          assertTrue(d.fromDenyCache(), "refused without asking the stalled store: " + d);
        }
      } finally {
        server.resume();
      }
    }
  }

  @Test
  void aRequestRefusedOnATimeoutGivesBackWhatItsLateScriptCounted() {
    try (RedisServer server = RedisServer.start();
        RedisCounterStore store = store(server)) {
      RateLimiter limiter =
          RateLimiter.fixedWindow(store)
              .tier(2, Duration.ofMinutes(1))
              .clock(new FakeClock())
              .failClosed(true)
              .build();
      server.pause();
      try {
        Decision closed = limiter.tryAcquire("client");
        assertFalse(closed.allowed());
        assertEquals(StoreStatus.FAILED_CLOSED, closed.storeStatus());
      } finally {
        server.resume();
      }
      answered(store);
      assertTrue(limiter.tryAcquire("client").allowed());
      Decision second = limiter.tryAcquire("client");
      assertTrue(second.allowed(), "the refused request took nothing from the limit: " + second);
      assertFalse(limiter.tryAcquire("client").allowed());
    }
  }

  @Test
  void aScriptPastTheDeadlineHandsOverTheCountsRedisAnswersLate() throws Exception {
    try (RedisServer server = RedisServer.start();
        RedisCounterStore store = store(server)) {
      List<CounterUpdate> one =
          List.of(
              new CounterUpdate("late", "k", 60_000, W, 1),
              new CounterUpdate("late", "k", 1_000, W * 60, 2));
      store.increment(List.of(new CounterUpdate("late", "k", 60_000, W - 1, 7)));
      assertEquals(Counts.of(1, 7, 2, 0), store.increment(one));
      Counts late =
          LateAnswers.whileStalled(
              server::pause, server::resume, RuntimeException.class, () -> store.increment(one));
      assertEquals(Counts.of(2, 7, 4, 0), late, "the script ran once Redis answered");
      assertEquals(Counts.of(3, 7, 6, 0), store.increment(one), "and its write stands");
    }
  }

  @Test
  void anAsynchronousScriptPastTheDeadlineHandsOverItsLateCounts() throws Exception {
    try (RedisServer server = RedisServer.start();
        RedisCounterStore store = store(server)) {
      List<CounterUpdate> one = List.of(new CounterUpdate("late-async", "k", 60_000, W, 1));
      store.increment(one);
      long[] pairs = new long[2];
      Counts late =
          LateAnswers.whileStalled(
              server::pause,
              server::resume,
              CompletionException.class,
              () -> store.incrementAsync(CounterBatch.of(one, pairs)).join());
      assertEquals(2, late.current(0), "the script ran once Redis answered");
      assertEquals(0, pairs[0], "the late counts are not written into the batch, reused since");
    }
  }
}
