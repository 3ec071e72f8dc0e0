package dev.sluice.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Outcome;
import dev.sluice.RateLimiter;
import dev.sluice.Sync;
import dev.sluice.store.memcached.MemcachedCounterStore;
import dev.sluice.testkit.MemcachedServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Two-layer counting across 3 instances (each with its own memcached client) on one real memcached:
 * a client sends to all three, well over its limit, and every true window (the fixed window of the
 * system clock) is checked against limit + the overshoot bound of docs/RULES.md. The bound is
 * computed from the requests each instance actually received (its peak in any span of 2 × (sync
 * interval + tick + allowance)), so a late thread on a loaded machine is in the bound, not a flake.
 */
class TwoLayerFleetIT {

  private static final int INSTANCES = 3;
  private static final long LIMIT = 100;
  private static final long PERIOD = 1_000;

  /** Sync tick plus an allowance for the round trip and a late sync thread on a loaded machine. */
  private static final long SLACK_MILLIS = 5 + 50;

  private static MemcachedServer memcached;

  @BeforeAll
  static void start() {
    memcached = MemcachedServer.start();
  }

  @AfterAll
  static void stop() {
    if (memcached != null) {
      memcached.close();
    }
  }

  private static MemcachedCounterStore store() {
    return MemcachedCounterStore.builder()
        .servers(memcached.address())
        .operationTimeout(Duration.ofSeconds(2))
        // Windows are judged by this host's clock, which all three instances share.
        .storeClock(false)
        .build();
  }

  private static RateLimiter limiter(MemcachedCounterStore store, String id, long syncMillis) {
    return RateLimiter.fixedWindow(store)
        .id(id)
        .tier(LIMIT, Duration.ofMillis(PERIOD))
        .sync(new Sync(Duration.ofMillis(syncMillis), INSTANCES))
        .build();
  }

  /** What one instance saw: when each request came and whether it was allowed. */
  @SuppressWarnings("ArrayRecordComponent") // parallel arrays read by index, never compared
  private record Seen(long[] at, boolean[] allowed, int n) {}

  private static Seen drive(RateLimiter l, int perSecond, long startMillis, long runMillis) {
    int total = (int) (perSecond * runMillis / 1000);
    long[] at = new long[total];
    boolean[] allowed = new boolean[total];
    Outcome out = new Outcome();
    long startNanos = System.nanoTime() + (startMillis - System.currentTimeMillis()) * 1_000_000;
    for (int k = 0; k < total; k++) {
      long due = startNanos + (long) (k * 1e9 / perSecond);
      long wait = due - System.nanoTime();
      if (wait > 0) {
        LockSupport.parkNanos(wait);
      }
      at[k] = System.currentTimeMillis();
      allowed[k] = l.tryAcquire("client", 1, out);
    }
    return new Seen(at, allowed, total);
  }

  @Test
  void threeInstancesStayWithinTheBoundInEveryWindow() throws Exception {
    long[][] configs = {{100, 200}, {250, 200}, {100, 1000}, {50, 600}};
    for (long[] c : configs) {
      long sync = c[0];
      int rate = (int) c[1];
      List<MemcachedCounterStore> stores = new ArrayList<>();
      List<Thread> threads = new ArrayList<>();
      Seen[] seen = new Seen[INSTANCES];
      // Start at a window boundary, and run three full windows.
      long start = (System.currentTimeMillis() / PERIOD + 1) * PERIOD;
      for (int i = 0; i < INSTANCES; i++) {
        MemcachedCounterStore s = store();
        stores.add(s);
        RateLimiter l = limiter(s, "two-layer-" + sync + "-" + rate, sync);
        int idx = i;
        Thread t = new Thread(() -> seen[idx] = drive(l, rate, start, 3 * PERIOD));
        threads.add(t);
        t.start();
      }
      for (Thread t : threads) {
        t.join();
      }
      stores.forEach(MemcachedCounterStore::close);

      long span = 2 * (sync + SLACK_MILLIS);
      long bound = bound(seen, span);
      for (long w = start / PERIOD; w < start / PERIOD + 3; w++) {
        long allowed = 0;
        for (Seen s : seen) {
          for (int k = 0; k < s.n(); k++) {
            if (s.allowed()[k] && s.at()[k] / PERIOD == w) {
              allowed++;
            }
          }
        }
        long window = w - start / PERIOD;
        System.out.printf(
            "two-layer fleet: sync %d ms, %d/s per instance: window %d allowed %d (limit %d,"
                + " bound %d)%n",
            sync, rate, window, allowed, LIMIT, bound);
        assertTrue(
            allowed <= LIMIT + bound,
            "sync " + sync + " ms, " + rate + "/s: " + allowed + " > " + LIMIT + " + " + bound);
        assertTrue(
            allowed >= LIMIT,
            "a two-layer limiter never admits less than the limit to a client over it: " + allowed);
      }
    }
  }

  /** max over i of the sum over the other instances of min(limit, peak requests in a span). */
  private static long bound(Seen[] seen, long span) {
    long[] peak = new long[seen.length];
    for (int j = 0; j < seen.length; j++) {
      Seen s = seen[j];
      int from = 0;
      for (int k = 0; k < s.n(); k++) {
        while (s.at()[k] - s.at()[from] >= span) {
          from++;
        }
        peak[j] = Math.max(peak[j], k - from + 1);
      }
    }
    long bound = 0;
    for (int i = 0; i < seen.length; i++) {
      long b = 0;
      for (int j = 0; j < seen.length; j++) {
        if (j != i) {
          b += Math.min(LIMIT, peak[j]);
        }
      }
      bound = Math.max(bound, b);
    }
    return bound;
  }

  @Test
  void storeOperationsFollowTheSyncIntervalNotTheRequestRate() {
    long[] ops = new long[2];
    int[] rates = {200, 2000};
    for (int run = 0; run < 2; run++) {
      try (MemcachedCounterStore s = store()) {
        RateLimiter l =
            RateLimiter.fixedWindow(s)
                .id("ops-" + run)
                .tier(1_000_000, Duration.ofMillis(PERIOD))
                .sync(Sync.every(Duration.ofMillis(100)))
                .build();
        long before = memcached.operations();
        long start = (System.currentTimeMillis() / PERIOD + 1) * PERIOD;
        drive(l, rates[run], start, 2 * PERIOD);
        // The last push is done once the server's operations stop changing for 2.5 intervals.
        long[] last = {memcached.operations(), System.nanoTime()};
        assertTrue(
            MemcachedServer.await(
                Duration.ofSeconds(5),
                () -> {
                  long o = memcached.operations();
                  if (o != last[0]) {
                    last[0] = o;
                    last[1] = System.nanoTime();
                  }
                  return System.nanoTime() - last[1] >= 250_000_000L;
                }),
            "the two-layer pushes never settled");
        ops[run] = last[0] - before;
      }
      System.out.printf(
          "two-layer store operations: %d/s for 2 s -> %d memcached operations%n",
          rates[run], ops[run]);
    }
    // One push per 100 ms for 2 s, one more per window start, a read of each previous window.
    for (long o : ops) {
      assertTrue(o >= 10 && o <= 40, "store operations: " + o);
    }
    assertTrue(
        ops[1] <= ops[0] + 10,
        "10x the requests, about the same operations: " + ops[0] + ", " + ops[1]);
  }
}
