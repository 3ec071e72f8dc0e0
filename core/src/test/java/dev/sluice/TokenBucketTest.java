package dev.sluice;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.spi.FakeClock;
import dev.sluice.spi.ReferenceCounterStore;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class TokenBucketTest {

  private final FakeClock clock = new FakeClock();
  private final ReferenceCounterStore store = new ReferenceCounterStore();

  private RateLimiter bucket(long limit, Duration period, long burst, int denyCacheSize) {
    return RateLimiter.tokenBucket(store)
        .tier(limit, period, burst)
        .clock(clock)
        .denyCacheSize(denyCacheSize)
        .build();
  }

  @Test
  void fivePassAtOnceTheSixthWaitsExactlyOneSecondAndOneMorePassesThen() {
    RateLimiter l = bucket(60, Duration.ofMinutes(1), 5, 0);
    for (int i = 1; i <= 5; i++) {
      Decision d = l.tryAcquire("k");
      assertTrue(d.allowed(), "request " + i);
      assertEquals(5, d.limit());
      assertEquals(5 - i, d.remaining());
      assertEquals(Duration.ofSeconds(i), d.resetAfter(), "full again after " + i + " refills");
    }
    Decision sixth = l.tryAcquire("k");
    assertFalse(sixth.allowed());
    assertEquals(Duration.ofSeconds(1), sixth.retryAfter());
    assertEquals(0, sixth.remaining());
    assertEquals(Duration.ofSeconds(5), sixth.resetAfter());

    clock.advanceMillis(999);
    Decision early = l.tryAcquire("k");
    assertFalse(early.allowed());
    assertEquals(Duration.ofMillis(1), early.retryAfter());
    clock.advanceMillis(1);
    assertTrue(l.tryAcquire("k").allowed(), "one token a second");
    Decision after = l.tryAcquire("k");
    assertFalse(after.allowed());
    assertEquals(Duration.ofSeconds(1), after.retryAfter());
  }

  @Test
  void aSteadyClientGetsTheBurstAndThenExactlyTheRate() {
    RateLimiter l = bucket(60, Duration.ofMinutes(1), 5, 0);
    int passed = 0;
    for (int t = 0; t <= 60_000; t += 100) {
      if (l.tryAcquire("k").allowed()) {
        passed++;
      }
      clock.advanceMillis(100);
    }
    assertEquals(5 + 60, passed);
  }

  @Test
  void anIdleBucketHoldsNoMoreThanItsBurst() {
    RateLimiter l = bucket(10, Duration.ofSeconds(1), 3, 0);
    l.tryAcquire("k");
    clock.advance(Duration.ofHours(2));
    int passed = 0;
    for (int i = 0; i < 20; i++) {
      passed += l.tryAcquire("k").allowed() ? 1 : 0;
    }
    assertEquals(3, passed);
  }

  @Test
  void tokensRefillAtFractionalIntervalsWithoutDrift() {
    // 3 per 1 s: one token every 333.33 ms; the third refill lands on exactly 1 s, the ninth on 3
    // s.
    RateLimiter l = bucket(3, Duration.ofSeconds(1), 3, 0);
    for (int i = 0; i < 3; i++) {
      assertTrue(l.tryAcquire("k").allowed());
    }
    Decision d = l.tryAcquire("k");
    assertFalse(d.allowed());
    assertEquals(Duration.ofMillis(334), d.retryAfter(), "333.33 ms, rounded up");
    int passed = 0;
    for (int t = 1; t <= 2_999; t++) {
      clock.advanceMillis(1);
      passed += l.tryAcquire("k").allowed() ? 1 : 0;
    }
    assertEquals(8, passed, "refills at 333.33 ms steps, to 2666.67 ms");
    clock.advanceMillis(1);
    assertTrue(l.tryAcquire("k").allowed(), "the ninth refill at exactly 3 s");
  }

  @Test
  void aRequestForSeveralTokensTakesThemAllOrNone() {
    RateLimiter l = bucket(60, Duration.ofMinutes(1), 5, 0);
    assertTrue(l.tryAcquire("k", 3).allowed());
    Decision three = l.tryAcquire("k", 3);
    assertFalse(three.allowed());
    assertEquals(Duration.ofSeconds(1), three.retryAfter(), "two left, one more in a second");
    assertEquals(2, l.tryAcquire("k", 2).remaining() + 2, "the refused three took nothing");
    Decision never = l.tryAcquire("k", 6);
    assertFalse(never.allowed());
    assertEquals(5, never.limit());
  }

  @Test
  void refusedRequestsTakeNothingAndTheDenyCacheAnswersThemUntilATokenIsDue() {
    RateLimiter l = bucket(60, Duration.ofMinutes(1), 5, 100);
    for (int i = 0; i < 5; i++) {
      l.tryAcquire("k");
    }
    for (int i = 0; i < 100; i++) {
      clock.advanceMillis(9);
      assertFalse(l.tryAcquire("k").allowed());
    }
    assertEquals(6, store.incrementCalls(), "one store call refused; the deny cache the rest");
    assertEquals(0, store.decrementCalls(), "the refused one was not written: nothing to refund");
    clock.advanceMillis(100);
    assertTrue(l.tryAcquire("k").allowed(), "the token due at 1 s");
  }

  @Test
  void aTokenBucketHasOneTierNoSyncAndOnlyItHasABurst() {
    assertThrows(
        IllegalArgumentException.class,
        () ->
            RateLimiter.tokenBucket(store)
                .tier(60, Duration.ofMinutes(1), 5)
                .tier(1000, Duration.ofHours(1), 100)
                .build());
    assertThrows(
        IllegalArgumentException.class,
        () -> RateLimiter.slidingWindow(store).tier(60, Duration.ofMinutes(1), 5).build());
    assertThrows(
        IllegalArgumentException.class,
        () ->
            RateLimiter.tokenBucket(store)
                .tier(60, Duration.ofMinutes(1), 5)
                .sync(new Sync(Duration.ofMillis(200), 2))
                .build());
    assertThrows(
        IllegalArgumentException.class,
        () -> RateLimiter.tokenBucket(store).tier(2_000_000, Duration.ofSeconds(1), 5).build());
  }
}
