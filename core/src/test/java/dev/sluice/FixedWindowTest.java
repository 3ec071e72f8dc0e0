package dev.sluice;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.spi.FakeClock;
import dev.sluice.spi.ReferenceCounterStore;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class FixedWindowTest {

  private final FakeClock clock = new FakeClock();
  private final ReferenceCounterStore store = new ReferenceCounterStore();

  private RateLimiter limiter(long limit, Duration period) {
    return RateLimiter.fixedWindow(store).tier(limit, period).clock(clock).denyCacheSize(0).build();
  }

  @Test
  void allowsTheLimitThenRejectsUntilTheWindowEnds() {
    RateLimiter l = limiter(3, Duration.ofMinutes(1));
    clock.advance(Duration.ofSeconds(15));
    for (int i = 1; i <= 3; i++) {
      Decision d = l.tryAcquire("k");
      assertTrue(d.allowed());
      assertEquals(i, d.used());
      assertEquals(3 - i, d.remaining());
      assertEquals(Duration.ofSeconds(45), d.resetAfter());
    }
    Decision rejected = l.tryAcquire("k");
    assertFalse(rejected.allowed());
    assertEquals(3, rejected.used());
    assertEquals(0, rejected.remaining());
    assertEquals(Duration.ofSeconds(45), rejected.retryAfter());

    clock.advance(Duration.ofSeconds(45).minusMillis(1));
    assertFalse(l.tryAcquire("k").allowed());
    clock.advanceMillis(1);
    Decision next = l.tryAcquire("k");
    assertTrue(next.allowed());
    assertEquals(1, next.used());
    assertEquals(Duration.ofMinutes(1), next.resetAfter());
  }

  @Test
  void aReusedOutcomeFindsEachRequestsWindowAsTheClockMovesEitherWay() {
    RateLimiter l = limiter(2, Duration.ofSeconds(1));
    RateLimiter staggered =
        RateLimiter.fixedWindow(store)
            .id("staggered")
            .tier(2, Duration.ofSeconds(1))
            .staggerWindows(true)
            .clock(clock)
            .denyCacheSize(0)
            .build();
    Outcome out = new Outcome();
    long start = clock.millis();
    assertTrue(l.tryAcquire("k", 1, out));
    assertTrue(l.tryAcquire("k", 1, out));
    assertFalse(l.tryAcquire("k", 1, out), "third in the window");
    clock.advanceMillis(1_000);
    assertTrue(l.tryAcquire("k", 1, out), "a new window");
    assertEquals(1, out.used());
    clock.set(start);
    assertFalse(l.tryAcquire("k", 1, out), "the clock went back: the first window, still full");
    // Another identity's windows begin elsewhere: the outcome's last window is not its own.
    for (String k : new String[] {"a", "b", "c", "d"}) {
      assertTrue(staggered.tryAcquire(k, 1, out));
      assertTrue(staggered.tryAcquire(k, 1, out));
      assertFalse(staggered.tryAcquire(k, 1, out), k + ": third in its window");
      Outcome fresh = new Outcome();
      assertFalse(staggered.tryAcquire(k, 1, fresh));
      assertEquals(fresh.resetAfterMillis(), out.resetAfterMillis(), k + ": the same window");
    }
  }

  @Test
  void rejectedRequestsGiveTheirPermitsBack() {
    RateLimiter l = limiter(2, Duration.ofSeconds(10));
    long w = clock.millis() / 10_000;
    for (int i = 0; i < 10; i++) {
      l.tryAcquire("k");
    }
    assertEquals(2, store.count("default", "k", 10_000, w));
    assertEquals(8, store.decrementCalls());
  }

  @Test
  void permitsAreCountedTogether() {
    RateLimiter l = limiter(10, Duration.ofSeconds(1));
    assertTrue(l.tryAcquire("k", 7).allowed());
    Decision d = l.tryAcquire("k", 4);
    assertFalse(d.allowed());
    assertEquals(3, d.remaining());
    assertTrue(l.tryAcquire("k", 3).allowed());
  }

  @Test
  void aRequestLargerThanTheLimitNeverPassesAndWaitsAPeriod() {
    RateLimiter l = limiter(5, Duration.ofSeconds(2));
    Decision d = l.tryAcquire("k", 6);
    assertFalse(d.allowed());
    assertEquals(Duration.ofSeconds(2), d.retryAfter());
  }

  @Test
  void staggeredWindowsMoveEachKeysBoundaryAndKeepItStable() {
    RateLimiter l =
        RateLimiter.fixedWindow(store)
            .tier(1, Duration.ofMinutes(5))
            .clock(clock)
            .staggerWindows(true)
            .denyCacheSize(0)
            .build();
    Set<Duration> resets = new HashSet<>();
    for (int i = 0; i < 20; i++) {
      resets.add(l.tryAcquire("client-" + i).resetAfter());
    }
    assertTrue(resets.size() > 10, "boundaries should differ between keys: " + resets);

    Decision first = l.tryAcquire("client-x");
    Decision second = l.tryAcquire("client-x");
    assertFalse(second.allowed());
    assertEquals(first.resetAfter(), second.retryAfter());
    clock.advance(second.retryAfter().minusMillis(1));
    assertFalse(l.tryAcquire("client-x").allowed());
    clock.advanceMillis(1);
    assertTrue(l.tryAcquire("client-x").allowed());
    for (Duration r : resets) {
      assertTrue(
          r.compareTo(Duration.ZERO) > 0 && r.compareTo(Duration.ofMinutes(5)) <= 0, r::toString);
    }
  }

  @Test
  void unstaggeredWindowsShareTheBoundary() {
    RateLimiter l = limiter(1, Duration.ofMinutes(5));
    clock.advance(Duration.ofSeconds(10));
    assertEquals(l.tryAcquire("a").resetAfter(), l.tryAcquire("b").resetAfter());
    assertNotEquals(Duration.ZERO, l.tryAcquire("c").resetAfter());
  }
}
