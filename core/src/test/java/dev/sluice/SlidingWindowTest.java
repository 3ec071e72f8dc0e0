package dev.sluice;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.spi.CounterUpdate;
import dev.sluice.spi.FakeClock;
import dev.sluice.spi.ReferenceCounterStore;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class SlidingWindowTest {

  private static final long MINUTE = 60_000;
  private final FakeClock clock = new FakeClock();
  private final ReferenceCounterStore store = new ReferenceCounterStore();

  private RateLimiter limiter(long limit, long periodMillis) {
    return RateLimiter.slidingWindow(store)
        .tier(limit, Duration.ofMillis(periodMillis))
        .clock(clock)
        .denyCacheSize(0)
        .build();
  }

  private void seed(String key, long period, long window, long count) {
    if (count > 0) {
      store.increment(List.of(new CounterUpdate("default", key, period, window, count)));
    }
  }

  @Test
  void theWorkedExampleOfTheAlgorithm() {
    // 500/min; minute 22 saw 400, minute 23 has 250 so far; a request at 23:45.
    RateLimiter l = limiter(500, MINUTE);
    long w = clock.millis() / MINUTE;
    seed("k", MINUTE, w - 1, 400);
    seed("k", MINUTE, w, 250);
    clock.advance(Duration.ofSeconds(45));
    Decision d = l.tryAcquire("k");
    assertTrue(d.allowed());
    assertEquals(351, d.used()); // 400 × 15/60 + 250 + 1
    assertEquals(149, d.remaining());
    assertEquals(Duration.ofSeconds(15 + 60), d.resetAfter());
  }

  @Test
  void theEstimateDecaysThePreviousWindow() {
    RateLimiter l = limiter(10, MINUTE);
    long w = clock.millis() / MINUTE;
    seed("k", MINUTE, w - 1, 10);
    assertFalse(l.tryAcquire("k").allowed(), "at the boundary the previous window counts whole");
    clock.advance(Duration.ofSeconds(6)); // 10 × 0.9 + 1 = 10
    assertTrue(l.tryAcquire("k").allowed());
  }

  @Test
  void retryAfterIsTheExactInstantTheEstimateLetsTheRequestThrough() {
    RateLimiter l = limiter(100, MINUTE);
    long w = clock.millis() / MINUTE;
    seed("k", MINUTE, w - 1, 80);
    clock.advance(Duration.ofSeconds(30));
    seed("k", MINUTE, w, 60);
    // 80 × 1/2 + 60 + 1 = 101 > 100; passes when 80 × (1 − f) + 61 ≤ 100, f = 0.5125 → 750 ms from
    // now.
    Decision d = l.tryAcquire("k");
    assertFalse(d.allowed());
    assertEquals(Duration.ofMillis(750), d.retryAfter());
    clock.advance(d.retryAfter().minusMillis(1));
    assertFalse(l.tryAcquire("k").allowed());
    clock.advanceMillis(1);
    assertTrue(l.tryAcquire("k").allowed());
  }

  @Test
  void retryAfterLooksIntoTheNextWindowWhenTheCurrentOneIsFull() {
    RateLimiter l = limiter(10, MINUTE);
    long w = clock.millis() / MINUTE;
    seed("k", MINUTE, w, 10);
    clock.advance(Duration.ofSeconds(30));
    // Next window: 10 × (1 − g) + 1 ≤ 10 → g = 0.1 → 6 s after the boundary, 36 s from now.
    Decision d = l.tryAcquire("k");
    assertFalse(d.allowed());
    assertEquals(Duration.ofSeconds(36), d.retryAfter());
    clock.advance(d.retryAfter().minusMillis(1));
    assertFalse(l.tryAcquire("k").allowed());
    clock.advanceMillis(1);
    assertTrue(l.tryAcquire("k").allowed());
  }

  @Test
  void retryAfterIsExactForRandomStates() {
    Random random = new Random(42);
    for (int trial = 0; trial < 2_000; trial++) {
      ReferenceCounterStore s = new ReferenceCounterStore();
      FakeClock c = new FakeClock();
      long limit = 1L + random.nextInt(200);
      long period = 1_000L + random.nextInt(120_000);
      long permits = 1L + random.nextInt((int) Math.min(limit, 5));
      RateLimiter l =
          RateLimiter.slidingWindow(s)
              .tier(limit, Duration.ofMillis(period))
              .clock(c)
              .denyCacheSize(0)
              .build();
      long w = c.millis() / period;
      // A state the limiter reaches: each window at most the limit, and the current one at most
      // what
      // the decayed previous window lets through now (every request past that was refunded).
      long prev = random.nextInt((int) (limit + 1));
      long elapsed = random.nextInt((int) period);
      long admits = (long) Math.floor(limit - prev * (1 - elapsed / (double) period) + 1e-9);
      long cur = random.nextInt((int) Math.max(1, admits + 1));
      if (prev > 0) {
        s.increment(List.of(new CounterUpdate("default", "k", period, w - 1, prev)));
      }
      if (cur > 0) {
        s.increment(List.of(new CounterUpdate("default", "k", period, w, cur)));
      }
      c.advanceMillis(elapsed);
      Decision d = l.tryAcquire("k", permits);
      if (d.allowed()) {
        continue;
      }
      String what =
          "limit="
              + limit
              + " period="
              + period
              + " prev="
              + prev
              + " cur="
              + cur
              + " permits="
              + permits
              + " "
              + d;
      c.advance(d.retryAfter().minusMillis(1));
      assertFalse(l.tryAcquire("k", permits).allowed(), () -> "passed before Retry-After: " + what);
      c.advanceMillis(1);
      assertTrue(l.tryAcquire("k", permits).allowed(), () -> "rejected at Retry-After: " + what);
    }
  }

  @Test
  void aLongQuietSpellForgetsEverything() {
    RateLimiter l = limiter(2, MINUTE);
    l.tryAcquire("k");
    l.tryAcquire("k");
    assertFalse(l.tryAcquire("k").allowed());
    clock.advance(Duration.ofMinutes(2));
    Decision d = l.tryAcquire("k");
    assertTrue(d.allowed());
    assertEquals(1, d.used());
  }
}
