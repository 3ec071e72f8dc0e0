package dev.sluice.bench;

import dev.sluice.Outcome;
import dev.sluice.RateLimiter;
import dev.sluice.store.memcached.MemcachedCounterStore;
import dev.sluice.testkit.MemcachedServer;
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
 * A decision that must read several previous windows: a sliding window with three tiers (1 s, 1 m,
 * 1 h) over 300,000 clients, so the store's cache of previous counts rarely holds them. With {@code
 * bulk=true} the store reads them with one multiget per node, with {@code bulk=false} with one get
 * per key. Memcached's own {@code stats} (keys read, bytes sent and received) are printed per
 * trial.
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
@State(Scope.Benchmark)
public class MultigetBenchmark {

  @Param({"true", "false"})
  public boolean bulk;

  private MemcachedServer server;
  private MemcachedCounterStore store;
  private RateLimiter limiter;
  private final Outcome out = new Outcome();
  private final String[] keys = new String[300_000];
  private int next;
  private long decisions;
  private long[] before;

  @Setup(Level.Trial)
  public void setUp() {
    server = MemcachedServer.start(256);
    store =
        MemcachedCounterStore.builder()
            .servers(server.address())
            .operationTimeout(Duration.ofMillis(100))
            .bulkGets(bulk)
            .build();
    long high = 1_000_000_000L;
    limiter =
        RateLimiter.slidingWindow(store)
            .id("multiget")
            .tier(high, Duration.ofSeconds(1))
            .tier(high, Duration.ofMinutes(1))
            .tier(high, Duration.ofHours(1))
            .build();
    for (int i = 0; i < keys.length; i++) {
      keys[i] = "client-" + i;
    }
    before = stats();
  }

  private long[] stats() {
    var st = server.stats();
    return new long[] {
      Long.parseLong(st.get("cmd_get")),
      Long.parseLong(st.get("bytes_read")),
      Long.parseLong(st.get("bytes_written"))
    };
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    long[] after = stats();
    System.out.printf(
        "%nbulk=%s: %d decisions; per decision: %.2f keys read (cmd_get), %.0f bytes to memcached,"
            + " %.0f bytes back%n",
        bulk,
        decisions,
        (after[0] - before[0]) / (double) decisions,
        (after[1] - before[1]) / (double) decisions,
        (after[2] - before[2]) / (double) decisions);
    store.close();
    server.close();
  }

  @Benchmark
  public boolean decide() {
    int i = next;
    next = i + 1 == keys.length ? 0 : i + 1;
    decisions++;
    return limiter.tryAcquire(keys[i], 1, out);
  }
}
