package dev.sluice.bench;

import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.store.memcached.MemcachedCounterStore;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import net.spy.memcached.MemcachedClient;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * A decision on the memcached store against the floor: one plain spymemcached {@code incr} on the
 * same kind of client (binary protocol, consistent hashing, no Nagle). Starts its own memcached
 * when the binary is on the PATH, or uses {@code -Dsluice.memcached=host:port}.
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
@State(Scope.Benchmark)
public class MemcachedDecisionBenchmark {

  private BenchMemcached memcached;
  private MemcachedCounterStore store;
  private MemcachedClient raw;
  private RateLimiter oneTier;
  private RateLimiter twoTiers;
  private RateLimiter threeTiers;
  private final String[] keys = new String[1_000];

  @Setup(Level.Trial)
  public void setUp() throws IOException {
    memcached = BenchMemcached.start();
    String address = memcached.address();
    store = memcached.store();
    raw = BenchMemcached.raw(address);
    long high = 1_000_000_000L;
    oneTier = RateLimiter.slidingWindow(store).id("one").tier(high, Duration.ofSeconds(1)).build();
    twoTiers =
        RateLimiter.slidingWindow(store)
            .id("two")
            .tier(high, Duration.ofSeconds(1))
            .tier(high, Duration.ofMinutes(1))
            .build();
    threeTiers =
        RateLimiter.slidingWindow(store)
            .id("three")
            .tier(high, Duration.ofSeconds(1))
            .tier(high, Duration.ofMinutes(1))
            .tier(high, Duration.ofHours(1))
            .build();
    for (int i = 0; i < keys.length; i++) {
      keys[i] = "client-" + i;
    }
    // A just-started memcached on a busy machine may miss the first 50 ms timeouts.
    Decision d = twoTiers.tryAcquire("check");
    for (int i = 0; i < 50 && (!d.allowed() || d.storeFailed()); i++) {
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
      d = twoTiers.tryAcquire("check");
    }
    if (!d.allowed() || d.storeFailed()) {
      throw new IllegalStateException("memcached at " + address + " did not answer: " + d);
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    raw.shutdown(1, TimeUnit.SECONDS);
    store.close();
    memcached.close();
  }

  /** Each thread walks the keys from its own place. */
  @State(Scope.Thread)
  public static class Cursor {
    int next = java.util.concurrent.ThreadLocalRandom.current().nextInt(1_000);
    final dev.sluice.Outcome out = new dev.sluice.Outcome();
  }

  private String key(Cursor c) {
    int i = c.next;
    c.next = i + 1 == keys.length ? 0 : i + 1;
    return keys[i];
  }

  /** The headline: sliding window, 2 tiers, on memcached. */
  @Benchmark
  public Decision sluiceDecision(Cursor c) {
    return twoTiers.tryAcquire(key(c));
  }

  @Benchmark
  public Decision sluiceOneTier(Cursor c) {
    return oneTier.tryAcquire(key(c));
  }

  /** One tier through the call the filters make: the caller's Outcome, no Decision built. */
  @Benchmark
  public boolean sluiceOneTierOutcome(Cursor c) {
    return oneTier.tryAcquire(key(c), 1, c.out);
  }

  @Benchmark
  public Decision sluiceThreeTiers(Cursor c) {
    return threeTiers.tryAcquire(key(c));
  }

  /** The floor: one incr, one round trip, nothing else. */
  @Benchmark
  public long rawIncr(Cursor c) throws Exception {
    return raw.asyncIncr("raw:" + key(c), 1L, 1L, 60).get(1, TimeUnit.SECONDS);
  }

  /** The floor of {@link #sluiceDecision}: its two incrs, queued together (one round trip). */
  @Benchmark
  public long rawIncrs2(Cursor c) throws Exception {
    return rawIncrs(key(c), 2);
  }

  /** The floor of {@link #sluiceThreeTiers}: three incrs in one round trip. */
  @Benchmark
  public long rawIncrs3(Cursor c) throws Exception {
    return rawIncrs(key(c), 3);
  }

  private long rawIncrs(String key, int k) throws Exception {
    java.util.List<java.util.concurrent.Future<Long>> sent = new java.util.ArrayList<>(k);
    // Queued as the store queues a decision's: one wake-up of the I/O thread for all k.
    dev.sluice.store.memcached.Wakeups.together(
        () -> {
          for (int i = 0; i < k; i++) {
            sent.add(raw.asyncIncr("raw" + i + ":" + key, 1L, 1L, 60));
          }
        });
    long sum = 0;
    for (java.util.concurrent.Future<Long> f : sent) {
      sum += f.get(1, TimeUnit.SECONDS);
    }
    return sum;
  }
}
