package dev.sluice.twolayer;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Outcome;
import dev.sluice.RateLimiter;
import dev.sluice.Sync;
import dev.sluice.TestSettings;
import dev.sluice.engine.EngineAccess;
import dev.sluice.spi.FakeClock;
import dev.sluice.spi.ReferenceCounterStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Searches for the worst overshoot of two-layer counting, and checks it against the bound in
 * docs/RULES.md: in any window, the fleet allows at most {@code limit + max_i Σ_{j≠i} min(limit,
 * A_j)}, where {@code A_j} is the most requests instance j receives in any span of {@code 2 × (sync
 * interval + tick)} (with a store that answers at once; a real one adds its round trip to the
 * span). For a steady rate r per instance that is {@code (instances − 1) × min(limit, 2r(interval +
 * tick))}.
 *
 * <p>Instances, sync intervals, limits, rates, arrival patterns and the phases of each instance's
 * sync tick are drawn at random, then the worst cases found are mutated to look for worse ones.
 * Deterministic: a fixed seed and an injected clock.
 */
class TwoLayerBoundTest {

  private static final long PERIOD = 1_000;
  private static final int WINDOWS = 3;
  private static final long[] INTERVALS = {20, 50, 100, 200, 500};
  private static final long[] LIMITS = {5, 20, 100, 1_000};

  enum Pattern {
    STEADY,
    RANDOM,
    BURST_AFTER_SYNC,
    BURST_AT_WINDOW_START
  }

  private static final Pattern[] PATTERNS = Pattern.values();

  record Case(int instances, long interval, long limit, double rate, Pattern pattern, long seed) {
    Case mutate(Random r) {
      double f = Math.exp(r.nextGaussian() * 0.5);
      return new Case(
          instances,
          r.nextInt(4) == 0 ? INTERVALS[r.nextInt(INTERVALS.length)] : interval,
          limit,
          Math.min(5, Math.max(0.005, rate * f)),
          r.nextInt(4) == 0 ? PATTERNS[r.nextInt(4)] : pattern,
          r.nextLong());
    }
  }

  /**
   * @param rateBound whether the bound came from the rates (no instance's term capped at the limit)
   */
  record Result(Case c, long overshoot, long bound, boolean rateBound) {
    double ratio() {
      return bound == 0
          ? (overshoot > 0 ? Double.POSITIVE_INFINITY : 0)
          : overshoot / (double) bound;
    }
  }

  static Result run(Case c) {
    FakeClock clock = new FakeClock(0);
    ReferenceCounterStore store = new ReferenceCounterStore();
    Random random = new Random(c.seed());
    int n = c.instances();
    RateLimiter[] limiters = new RateLimiter[n];
    int[] phase = new int[n];
    long[] burstAt = new long[n];
    double[] owed = new double[n];
    for (int i = 0; i < n; i++) {
      RateLimiter.Builder b =
          RateLimiter.fixedWindow(store)
              .clock(clock)
              .id("r")
              .denyCacheSize(0)
              .tier(c.limit(), Duration.ofMillis(PERIOD))
              .sync(Sync.every(Duration.ofMillis(c.interval())));
      TestSettings.syncByHand(b);
      limiters[i] = b.build();
      phase[i] = random.nextInt((int) TwoLayerStore.TICK_MILLIS);
      burstAt[i] = random.nextInt((int) TwoLayerStore.TICK_MILLIS);
    }
    long span = 2 * (c.interval() + TwoLayerStore.TICK_MILLIS);
    long total = PERIOD * WINDOWS;
    int[][] received = new int[n][(int) total];
    long[] allowed = new long[WINDOWS];
    long[] lastSync = new long[n];
    Outcome out = new Outcome();
    Integer[] order = new Integer[n];
    for (int i = 0; i < n; i++) {
      order[i] = i;
    }
    for (long t = 0; t < total; t++) {
      clock.set(t);
      java.util.Collections.shuffle(java.util.Arrays.asList(order), random);
      for (int i : order) {
        int k = arrivals(c, random, t, i, owed, burstAt, lastSync);
        received[i][(int) t] = k;
        for (int q = 0; q < k; q++) {
          if (limiters[i].tryAcquire("client", 1, out)) {
            allowed[(int) (t / PERIOD)]++;
          }
        }
      }
      for (int i = 0; i < n; i++) {
        if ((t + phase[i]) % TwoLayerStore.TICK_MILLIS == 0) {
          EngineAccess.twoLayer(limiters[i]).syncDue();
          lastSync[i] = t;
        }
      }
    }
    long worst = 0;
    for (long a : allowed) {
      worst = Math.max(worst, a - c.limit());
    }
    long[] peak = new long[n];
    for (int j = 0; j < n; j++) {
      long sum = 0;
      for (int t = 0; t < total; t++) {
        sum += received[j][t];
        if (t >= span) {
          sum -= received[j][(int) (t - span)];
        }
        peak[j] = Math.max(peak[j], sum);
      }
    }
    long bound = 0;
    boolean rateBound = true;
    for (int i = 0; i < n; i++) {
      long b = 0;
      for (int j = 0; j < n; j++) {
        if (j != i) {
          b += Math.min(c.limit(), peak[j]);
          rateBound &= peak[j] < c.limit();
        }
      }
      bound = Math.max(bound, b);
    }
    return new Result(c, worst, bound, rateBound);
  }

  private static int arrivals(
      Case c, Random r, long t, int i, double[] owed, long[] burstAt, long[] lastSync) {
    switch (c.pattern()) {
      case STEADY -> {
        owed[i] += c.rate();
        int k = (int) owed[i];
        owed[i] -= k;
        return k;
      }
      case RANDOM -> {
        // Poisson arrivals of mean rate per millisecond.
        double l = Math.exp(-c.rate());
        int k = 0;
        double p = r.nextDouble();
        while (p > l) {
          k++;
          p *= r.nextDouble();
        }
        return k;
      }
      case BURST_AFTER_SYNC -> {
        // The interval's worth of requests at once, just after this instance's sync.
        return t == lastSync[i] + 1 ? (int) Math.round(c.rate() * c.interval()) : 0;
      }
      default -> {
        // A burst at the start of every window, before any instance has synced it.
        return t % PERIOD == burstAt[i] ? (int) Math.round(c.rate() * c.interval()) : 0;
      }
    }
  }

  @Test
  void noCaseFoundExceedsTheBound() {
    Random r = new Random(20261122);
    List<Result> results = new ArrayList<>();
    for (int k = 0; k < 160; k++) {
      Case c =
          new Case(
              2 + r.nextInt(3),
              INTERVALS[r.nextInt(INTERVALS.length)],
              LIMITS[r.nextInt(LIMITS.length)],
              Math.exp(Math.log(0.005) + r.nextDouble() * Math.log(5 / 0.005)),
              Pattern.values()[r.nextInt(4)],
              r.nextLong());
      results.add(run(c));
    }
    for (int round = 0; round < 4; round++) {
      results.sort(Comparator.comparingDouble(Result::ratio).reversed());
      List<Result> best = new ArrayList<>(results.subList(0, 8));
      for (Result b : best) {
        for (int m = 0; m < 4; m++) {
          results.add(run(b.c().mutate(r)));
        }
      }
    }
    results.sort(Comparator.comparingDouble(Result::ratio).reversed());
    Result worst = results.get(0);
    System.out.printf(
        "two-layer bound search: %d cases; worst overshoot %d of bound %d (%.2f) in %s%n",
        results.size(), worst.overshoot(), worst.bound(), worst.ratio(), worst.c());
    for (Result x : results.subList(0, 5)) {
      System.out.printf(
          "  %.2f  overshoot %d, bound %d: %s%n", x.ratio(), x.overshoot(), x.bound(), x.c());
    }
    for (Pattern p : Pattern.values()) {
      results.stream()
          .filter(x -> x.c().pattern() == p)
          .findFirst()
          .ifPresent(
              x ->
                  System.out.printf(
                      "  worst %s: overshoot %d of bound %d (%.2f): %s%n",
                      p, x.overshoot(), x.bound(), x.ratio(), x.c()));
    }
    results.stream()
        .filter(Result::rateBound)
        .findFirst()
        .ifPresent(
            x ->
                System.out.printf(
                    "  worst where the rates bind: overshoot %d of bound %d (%.2f): %s%n",
                    x.overshoot(), x.bound(), x.ratio(), x.c()));
    for (Result x : results) {
      assertTrue(x.overshoot() <= x.bound(), () -> "over the bound: " + x);
    }
    assertTrue(worst.ratio() > 0.3, "the search finds cases near the bound: " + worst);
  }
}
