package dev.sluice.bench;

import com.netflix.concurrency.limits.Limiter;
import com.netflix.concurrency.limits.limit.FixedLimit;
import com.netflix.concurrency.limits.limiter.SimpleLimiter;
import dev.sluice.http.RequestLimiter;
import dev.sluice.http.Rule;
import dev.sluice.http.RuleSet;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import java.time.Duration;
import java.util.Optional;
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
 * One request's way into and out of a concurrency limit, on one hot key: Sluice's {@code
 * concurrency:} rule (decide, then release its slot), in memory and on memcached, against
 * Resilience4j's semaphore bulkhead and Netflix's {@code SimpleLimiter} with a fixed limit, which
 * limit one process only. The limit is never reached: this is the allow path's cost.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Benchmark)
public class ConcurrencyBenchmark {

  /** Where Sluice's slots live: this JVM, or a memcached the benchmark starts. */
  @Param({"in-memory", "memcached"})
  public String store;

  private BenchStore counters;
  private RequestLimiter limiter;
  private final Bulkhead bulkhead =
      Bulkhead.of(
          "bench",
          BulkheadConfig.custom()
              .maxConcurrentCalls(1_000_000)
              .maxWaitDuration(Duration.ZERO)
              .build());
  private final Limiter<Void> netflix =
      SimpleLimiter.newBuilder().limit(FixedLimit.of(1_000_000)).build();

  @Setup(Level.Trial)
  public void setUp() {
    counters = BenchStore.open(store);
    limiter =
        RequestLimiter.builder(counters.counters())
            .rules(
                RuleSet.builder()
                    .rule(
                        Rule.builder("in-flight")
                            .path("/api/v1/slow")
                            .key("header:X-Api-Key")
                            .concurrency(1_000_000, Duration.ofSeconds(30))
                            .build())
                    .build())
            .build();
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    counters.close();
  }

  @Benchmark
  public boolean sluice(BenchCaller c) {
    return c.inAndOut(limiter);
  }

  @Benchmark
  public boolean resilience4jBulkhead() {
    boolean allowed = bulkhead.tryAcquirePermission();
    if (allowed) {
      bulkhead.onComplete();
    }
    return allowed;
  }

  @Benchmark
  public boolean netflixSimpleLimiter() {
    Optional<Limiter.Listener> l = netflix.acquire(null);
    l.ifPresent(Limiter.Listener::onSuccess);
    return l.isPresent();
  }
}
