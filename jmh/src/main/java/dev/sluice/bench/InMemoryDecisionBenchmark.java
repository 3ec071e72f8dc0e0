package dev.sluice.bench;

import dev.sluice.Decision;
import dev.sluice.Outcome;
import dev.sluice.RateLimiter;
import dev.sluice.engine.CoarseClock;
import dev.sluice.store.inmemory.InMemoryCounterStore;
import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.Bucket;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import io.github.resilience4j.ratelimiter.internal.AtomicRateLimiter;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collections;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BiPredicate;
import java.util.function.Predicate;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One per-key decision in memory, clock read and key lookup included: Sluice against the limiters a
 * user would otherwise pick, each keeping one limiter per key in a map. {@code allow}: limits so
 * high every call passes; {@code reject}: every key already over its limit.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Benchmark)
public class InMemoryDecisionBenchmark {

  /**
   * {@code sluice-sliding} and {@code sluice-fixed} decide into a per-thread {@link Outcome} (the
   * call the filters make); {@code sluice-decision} is the sliding window through the convenient
   * {@link Decision}-returning call. All of them read the default clock, {@link CoarseClock}, as a
   * user's limiter does; {@code sluice-system} is the sliding window on the system clock, the read
   * every other limiter here pays on each call. {@code sluice-bucket} is the token bucket (GCRA),
   * the same job as Bucket4j's.
   */
  @Param({
    "sluice-sliding",
    "sluice-fixed",
    "sluice-bucket",
    "sluice-decision",
    "sluice-system",
    "bucket4j",
    "resilience4j",
    "guava"
  })
  public String limiter;

  @Param({"1", "100000"})
  public int keys;

  @Param({"allow", "reject"})
  public String path;

  /**
   * The order the keys are visited in: {@code in-turn}, {@code client-0} to {@code client-99999},
   * whose hashes follow one another, so a map that keeps neighbouring hashes in neighbouring slots
   * (as {@code ConcurrentHashMap} does) reads its table in order and the processor prefetches it;
   * {@code shuffled}, one fixed random order, as clients of a real API arrive.
   */
  @Param({"in-turn", "shuffled"})
  public String order;

  private String[] names;
  private BiPredicate<String, Cursor> decide;

  @State(Scope.Thread)
  public static class Cursor {
    int next;
    final Outcome outcome = new Outcome();
  }

  @Setup(Level.Trial)
  public void setUp() {
    names = new String[keys];
    for (int i = 0; i < keys; i++) {
      names[i] = "client-" + i;
    }
    if (order.equals("shuffled")) {
      Collections.shuffle(Arrays.asList(names), new Random(42));
    }
    boolean allow = path.equals("allow");
    // Allow: a billion a second (the most Bucket4j accepts), never reached here.
    long limit = allow ? 1_000_000_000L : 1;
    Duration period = allow ? Duration.ofSeconds(1) : Duration.ofHours(1);
    decide =
        switch (limiter) {
          case "sluice-sliding" ->
              sluice(
                  RateLimiter.slidingWindow(store())
                      .tier(limit, period)
                      .denyCacheSize(denyCache())
                      .build());
          case "sluice-system" ->
              sluice(
                  RateLimiter.slidingWindow(store())
                      .tier(limit, period)
                      .denyCacheSize(denyCache())
                      .clock(java.time.InstantSource.system())
                      .build());
          case "sluice-decision" -> {
            RateLimiter l =
                RateLimiter.slidingWindow(store())
                    .tier(limit, period)
                    .denyCacheSize(denyCache())
                    .build();
            yield (k, c) -> l.tryAcquire(k).allowed();
          }
          case "sluice-fixed" ->
              sluice(
                  RateLimiter.fixedWindow(store())
                      .tier(limit, period)
                      .denyCacheSize(denyCache())
                      .build());
          case "sluice-bucket" ->
              sluice(
                  (allow
                          ? RateLimiter.tokenBucket(store())
                              // A billion a second too: a million per millisecond.
                              .tier(1_000_000, Duration.ofMillis(1), 1_000_000)
                          : RateLimiter.tokenBucket(store()).tier(1, period, 1))
                      .denyCacheSize(denyCache())
                      .build());
          case "bucket4j" ->
              perKey(
                  k ->
                      Bucket.builder()
                          .addLimit(
                              Bandwidth.builder()
                                  .capacity(limit)
                                  .refillGreedy(limit, period)
                                  .build())
                          .build(),
                  b -> b.tryConsume(1));
          case "resilience4j" ->
              perKey(
                  k ->
                      new AtomicRateLimiter(
                          k,
                          RateLimiterConfig.custom()
                              .limitForPeriod((int) Math.min(Integer.MAX_VALUE, limit))
                              .limitRefreshPeriod(period)
                              .timeoutDuration(Duration.ZERO)
                              .build()),
                  AtomicRateLimiter::acquirePermission);
          case "guava" ->
              perKey(
                  k -> com.google.common.util.concurrent.RateLimiter.create(allow ? 1e9 : 1e-9),
                  com.google.common.util.concurrent.RateLimiter::tryAcquire);
          default -> throw new IllegalArgumentException(limiter);
        };
    // Every key takes its first permit before measuring: on the reject path it is then over its
    // limit.
    Cursor setup = new Cursor();
    for (String k : names) {
      boolean unused = decide.test(k, setup);
    }
    if (!allow && decide.test(names[0], setup)) {
      throw new IllegalStateException(limiter + " should reject");
    }
    if (allow && !decide.test(names[0], setup)) {
      throw new IllegalStateException(limiter + " should allow");
    }
  }

  /** Room for every key: a rejected key is then answered without a store call. */
  private int denyCache() {
    return Math.max(RateLimiter.Builder.DEFAULT_DENY_CACHE_SIZE, 2 * keys);
  }

  private InMemoryCounterStore store() {
    return InMemoryCounterStore.builder().maximumCounters(Math.max(1_000, 2L * keys)).build();
  }

  private static BiPredicate<String, Cursor> sluice(RateLimiter l) {
    return (k, c) -> l.tryAcquire(k, 1, c.outcome);
  }

  private static <T> BiPredicate<String, Cursor> perKey(
      java.util.function.Function<String, T> create, Predicate<T> acquire) {
    ConcurrentHashMap<String, T> map = new ConcurrentHashMap<>();
    return (k, c) -> acquire.test(map.computeIfAbsent(k, create));
  }

  private boolean next(Cursor c) {
    int i = c.next;
    c.next = i + 1 == keys ? 0 : i + 1;
    return decide.test(names[i], c);
  }

  @Benchmark
  @Threads(1)
  public boolean oneThread(Cursor c) {
    return next(c);
  }

  @Benchmark
  @Threads(2)
  public boolean twoThreads(Cursor c) {
    return next(c);
  }

  /** Four threads: on 100,000 keys, the spread of a busy API; on one key, contention. */
  @Benchmark
  @Threads(4)
  public boolean fourThreads(Cursor c) {
    return next(c);
  }
}
