package dev.sluice.bench;

import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.store.inmemory.InMemoryCounterStore;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * Replays synthetic traffic through Sluice's sliding and fixed windows and compares every decision
 * with an exact sliding log of the same limit, given the same history (the requests that limiter
 * let through). Prints a Markdown table.
 *
 * <p>Run: {@code java -cp jmh/target/benchmarks.jar dev.sluice.bench.AccuracyReport}
 */
public final class AccuracyReport {

  static final long LIMIT = 100;
  static final long PERIOD = 10_000;

  /** A whole number of periods, so windows start at t = 0 of the simulation. */
  static final long EPOCH = Instant.parse("2026-01-01T00:00:00Z").toEpochMilli();

  private static final StringBuilder split = new StringBuilder();

  private AccuracyReport() {}

  public static void main(String[] args) {
    long seed = args.length > 0 ? Long.parseLong(args[0]) : 20261121L;
    System.out.printf(Locale.ROOT, "Limit %d per %d s; seed %d.%n%n", LIMIT, PERIOD / 1000, seed);
    System.out.println(
        "| scenario | algorithm | requests | allowed | wrongly allowed | wrongly denied | wrong, > 10"
            + " per cent from the limit | mean rate error | worst overshoot |");
    System.out.println("|---|---|---:|---:|---:|---:|---:|---:|---:|");
    SplittableRandom r = new SplittableRandom(seed);
    run("Poisson 0.5× limit, 100 clients", poisson(r.split(), 100, 0.5, 60));
    run("Poisson 1× limit, 100 clients", poisson(r.split(), 100, 1.0, 60));
    run("Poisson 2× limit, 100 clients", poisson(r.split(), 100, 2.0, 60));
    run("on/off bursts (4× for 5 s, off 15 s), 100 clients", onOff(r.split(), 100, 60));
    populationSplit = true;
    run("10,000 clients: 99 % < 0.5×, 1 % at 2–10×", population(r.split(), 10_000, 10));
    populationSplit = false;
    run("adversarial: a limit's worth at each side of a boundary", adversarial(100, 30));
    System.out.println();
    System.out.println("Mixed population, errors among the clients under half the limit:");
    System.out.print(split);
  }

  /** Events as {@code time << 20 | client}, sorted. */
  static long[] poisson(SplittableRandom r, int clients, double load, int periods) {
    double[] rates = new double[clients];
    Arrays.fill(rates, load * LIMIT / PERIOD);
    return arrivals(r, rates, periods * PERIOD);
  }

  static long[] population(SplittableRandom r, int clients, int periods) {
    double[] rates = new double[clients];
    for (int c = 0; c < clients; c++) {
      double load = c % 100 == 0 ? 2 + 8 * r.nextDouble() : 0.5 * r.nextDouble();
      rates[c] = load * LIMIT / PERIOD;
    }
    return arrivals(r, rates, periods * PERIOD);
  }

  static long[] arrivals(SplittableRandom r, double[] perMilli, long duration) {
    long[] events = new long[1 << 16];
    int n = 0;
    for (int c = 0; c < perMilli.length; c++) {
      double t = 0;
      while (true) {
        t += -Math.log(1 - r.nextDouble()) / perMilli[c];
        if (t >= duration) {
          break;
        }
        if (n == events.length) {
          events = Arrays.copyOf(events, n * 2);
        }
        events[n++] = ((long) t << 20) | c;
      }
    }
    events = Arrays.copyOf(events, n);
    Arrays.sort(events);
    return events;
  }

  static long[] onOff(SplittableRandom r, int clients, int periods) {
    long[] events = new long[1 << 16];
    int n = 0;
    double rate = 4.0 * LIMIT / PERIOD;
    for (int c = 0; c < clients; c++) {
      long phase = r.nextLong(20_000);
      double t = 0;
      while (t < periods * PERIOD) {
        t += -Math.log(1 - r.nextDouble()) / rate;
        long cycle = ((long) t + phase) % 20_000;
        if (cycle < 5_000 && t < periods * PERIOD) {
          if (n == events.length) {
            events = Arrays.copyOf(events, n * 2);
          }
          events[n++] = ((long) t << 20) | c;
        }
      }
    }
    events = Arrays.copyOf(events, n);
    Arrays.sort(events);
    return events;
  }

  /**
   * Each client sends a limit's worth in the last second of a window and again in the first of the
   * next.
   */
  static long[] adversarial(int clients, int periods) {
    long[] events = new long[clients * periods * (int) LIMIT];
    int n = 0;
    for (int p = 1; p < periods; p += 2) {
      long boundary = p * PERIOD;
      for (int c = 0; c < clients; c++) {
        for (int i = 0; i < LIMIT; i++) {
          events[n++] = ((boundary - 1_000 + i * 10L) << 20) | c;
          events[n++] = ((boundary + i * 10L) << 20) | c;
        }
      }
    }
    events = Arrays.copyOf(events, n);
    Arrays.sort(events);
    return events;
  }

  /** Whether to print, after the table row, the errors among the light 99 % of the population. */
  static boolean populationSplit;

  static void run(String scenario, long[] events) {
    int clients = 0;
    for (long e : events) {
      clients = Math.max(clients, (int) (e & 0xFFFFF) + 1);
    }
    for (String algorithm : new String[] {"sliding", "fixed"}) {
      MutableClock clock = new MutableClock();
      InMemoryCounterStore store = InMemoryCounterStore.builder().clock(clock).build();
      RateLimiter limiter =
          (algorithm.equals("sliding")
                  ? RateLimiter.slidingWindow(store)
                  : RateLimiter.fixedWindow(store))
              .tier(LIMIT, Duration.ofMillis(PERIOD))
              .clock(clock)
              .build();
      Result res = replay(limiter, clock, events, clients);
      System.out.printf(
          Locale.ROOT,
          "| %s | %s | %,d | %,d | %.3f %% | %.3f %% | %.4f %% | %.2f %% | %+.1f %% |%n",
          scenario,
          algorithm,
          events.length,
          res.allowed,
          100.0 * res.wronglyAllowed / events.length,
          100.0 * res.wronglyDenied / events.length,
          100.0 * res.farWrong / events.length,
          100.0 * res.rateError / events.length,
          100.0 * (res.worstWindow - LIMIT) / LIMIT);
      if (populationSplit) {
        split.append(
            String.format(
                Locale.ROOT,
                "- %s: the light 99 %% of clients sent %,d requests; %,d were misclassified (%.4f %%).%n",
                algorithm,
                res.lightRequests,
                res.lightWrong,
                100.0 * res.lightWrong / res.lightRequests));
      }
    }
  }

  record Result(
      long allowed,
      long wronglyAllowed,
      long wronglyDenied,
      long farWrong,
      double rateError,
      long worstWindow,
      long lightRequests,
      long lightWrong) {}

  static Result replay(RateLimiter limiter, MutableClock clock, long[] events, int clients) {
    @SuppressWarnings("unchecked")
    ArrayDeque<Long>[] logs = new ArrayDeque[clients];
    String[] keys = new String[clients];
    for (int c = 0; c < clients; c++) {
      logs[c] = new ArrayDeque<>();
      keys[c] = "client-" + c;
    }
    long allowed = 0;
    long wronglyAllowed = 0;
    long wronglyDenied = 0;
    long farWrong = 0;
    long lightRequests = 0;
    long lightWrong = 0;
    double rateError = 0;
    long worst = 0;
    for (long e : events) {
      long t = e >>> 20;
      int c = (int) (e & 0xFFFFF);
      clock.millis = EPOCH + t;
      ArrayDeque<Long> log = logs[c];
      while (!log.isEmpty() && log.peekFirst() <= t - PERIOD) {
        log.pollFirst();
      }
      boolean truth = log.size() + 1 <= LIMIT;
      boolean far = Math.abs(log.size() + 1 - LIMIT) > LIMIT / 10;
      Decision d = limiter.tryAcquire(keys[c]);
      boolean light = c % 100 != 0;
      lightRequests += light ? 1 : 0;
      lightWrong += light && d.allowed() != truth ? 1 : 0;
      if (d.allowed()) {
        allowed++;
        log.addLast(t);
        worst = Math.max(worst, log.size());
        wronglyAllowed += truth ? 0 : 1;
        farWrong += !truth && far ? 1 : 0;
      } else {
        wronglyDenied += truth ? 1 : 0;
        farWrong += truth && far ? 1 : 0;
      }
      rateError += Math.abs(d.used() - log.size()) / (double) LIMIT;
    }
    return new Result(
        allowed,
        wronglyAllowed,
        wronglyDenied,
        farWrong,
        rateError,
        worst,
        lightRequests,
        lightWrong);
  }

  static final class MutableClock implements InstantSource {
    long millis = EPOCH;

    @Override
    public Instant instant() {
      return Instant.ofEpochMilli(millis);
    }

    @Override
    public long millis() {
      return millis;
    }
  }
}
