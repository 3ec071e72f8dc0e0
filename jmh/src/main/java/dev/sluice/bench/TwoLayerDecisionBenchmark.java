package dev.sluice.bench;

import dev.sluice.Outcome;
import dev.sluice.RateLimiter;
import dev.sluice.Sync;
import dev.sluice.store.memcached.MemcachedCounterStore;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
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
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * A decision of a two-layer limiter (sliding window, synced with memcached every 200 ms) against
 * the same limiter deciding through memcached on every call. Sample mode, for p50 and p99 per
 * decision; the sync runs on its own thread and its memcached operations are counted from the
 * server's {@code stats} at the end of the trial.
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
@State(Scope.Benchmark)
public class TwoLayerDecisionBenchmark {

  @Param({"1", "1000"})
  public int keys;

  private BenchMemcached memcached;
  private MemcachedCounterStore store;
  private RateLimiter twoLayer;
  private RateLimiter direct;
  private String[] names;
  private int next;
  private long opsBefore;
  private long decisions;
  private long startNanos;

  @State(Scope.Thread)
  public static class Cursor {
    final Outcome out = new Outcome();
  }

  @Setup(Level.Trial)
  public void setUp() {
    memcached = BenchMemcached.start();
    store = memcached.store();
    long high = 1_000_000_000L;
    twoLayer =
        RateLimiter.slidingWindow(store)
            .id("two-layer")
            .tier(high, Duration.ofSeconds(1))
            .sync(Sync.every(Duration.ofMillis(200)))
            .build();
    direct =
        RateLimiter.slidingWindow(store).id("direct").tier(high, Duration.ofSeconds(1)).build();
    names = new String[keys];
    for (int i = 0; i < keys; i++) {
      names[i] = "client-" + i;
    }
    opsBefore = memcached.operations();
    startNanos = System.nanoTime();
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    if (memcached.own()) {
      double secs = (System.nanoTime() - startNanos) / 1e9;
      System.out.printf(
          "%n%d decisions, %d memcached operations in %.0f s (%.0f operations/s)%n",
          decisions,
          memcached.operations() - opsBefore,
          secs,
          (memcached.operations() - opsBefore) / secs);
    }
    store.close();
    memcached.close();
  }

  private String key() {
    int i = next;
    next = i + 1 == names.length ? 0 : i + 1;
    decisions++;
    return names[i];
  }

  @Benchmark
  public boolean twoLayer(Cursor c) {
    return twoLayer.tryAcquire(key(), 1, c.out);
  }

  @Benchmark
  public boolean direct(Cursor c) {
    return direct.tryAcquire(key(), 1, c.out);
  }
}
