package dev.sluice.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.RateLimiter;
import dev.sluice.spi.FakeClock;
import dev.sluice.store.memcached.MemcachedCounterStore;
import dev.sluice.store.memcached.MemcachedServer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Locale;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Two instances whose clocks differ share counters in memcached. Time is injected: both clocks
 * step together, one {@code skew} ahead; the overshoot is measured in true (reference-clock)
 * windows of one period.
 */
class ClockSkewTest {

  private static final long LIMIT = 20;
  private static final long PERIOD = 1_000;
  private static MemcachedServer memcached;
  private static int prefix;

  @BeforeAll
  static void start() {
    memcached = MemcachedServer.start();
  }

  @AfterAll
  static void stop() {
    memcached.close();
  }

  /** The most requests allowed in any true window of one period, over 10 s at 10× the limit. */
  private static long worstWindow(long skewMillis, Function<MemcachedCounterStore, RateLimiter.Builder> algorithm) {
    long start = System.currentTimeMillis() / 60_000 * 60_000 + 60_000;
    FakeClock a = new FakeClock(start);
    FakeClock b = new FakeClock(start + skewMillis);
    try (MemcachedCounterStore s = MemcachedCounterStore.builder().servers(memcached.address())
        .prefix("skew" + ++prefix).operationTimeout(Duration.ofSeconds(2)).build()) {
      RateLimiter ra = algorithm.apply(s).tier(LIMIT, Duration.ofMillis(PERIOD)).clock(a).build();
      RateLimiter rb = algorithm.apply(s).tier(LIMIT, Duration.ofMillis(PERIOD)).clock(b).build();
      ArrayDeque<Long> allowed = new ArrayDeque<>();
      long worst = 0;
      for (long t = 0; t < 10_000; t += 5) {
        boolean onA = (t / 5) % 2 == 0;
        if ((onA ? ra : rb).tryAcquire("client").allowed()) {
          allowed.addLast(t);
          while (allowed.peekFirst() <= t - PERIOD) {
            allowed.pollFirst();
          }
          worst = Math.max(worst, allowed.size());
        }
        a.advanceMillis(5);
        b.advanceMillis(5);
      }
      return worst;
    }
  }

  @Test
  void overshootGrowsWithSkewAndIsMeasured() {
    Report.line("clock skew, 2 instances, limit 20 per 1 s, 200 req/s for 10 s; worst true 1 s window:");
    Report.line("| skew | sliding window | fixed window |");
    Report.line("|---:|---:|---:|");
    long slidingAtZero = 0;
    long fixedAtZero = 0;
    long slidingWorst = 0;
    for (long skew : new long[] {0, 50, 100, 250, 500, 1_000, 2_000}) {
      long sliding = worstWindow(skew, RateLimiter::slidingWindow);
      long fixed = worstWindow(skew, RateLimiter::fixedWindow);
      Report.line(String.format(Locale.ROOT, "| %d ms | %d (%+.0f %%) | %d (%+.0f %%) |", skew,
          sliding, 100.0 * (sliding - LIMIT) / LIMIT, fixed, 100.0 * (fixed - LIMIT) / LIMIT));
      if (skew == 0) {
        slidingAtZero = sliding;
        fixedAtZero = fixed;
      }
      slidingWorst = Math.max(slidingWorst, sliding);
    }
    assertTrue(slidingAtZero <= LIMIT * 1.1, "no skew, sliding: " + slidingAtZero);
    assertTrue(fixedAtZero <= 2 * LIMIT, "no skew, fixed: " + fixedAtZero);
    assertTrue(slidingWorst <= 3 * LIMIT, "even a 2 s skew stays bounded: " + slidingWorst);
  }
}
