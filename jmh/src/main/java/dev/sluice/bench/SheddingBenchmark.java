package dev.sluice.bench;

import com.netflix.concurrency.limits.Limiter;
import com.netflix.concurrency.limits.limit.Gradient2Limit;
import com.netflix.concurrency.limits.limiter.SimpleLimiter;
import dev.sluice.http.PriorityClass;
import dev.sluice.http.RequestLimiter;
import dev.sluice.http.RuleSet;
import dev.sluice.http.Shedding;
import java.util.List;
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
 * One request through load shedding, in and out, with no overload (the admit path): Sluice's
 * classes, fleet-usage shedder (its two counters in the store) and worker shedder, in memory and on
 * memcached, against Netflix's adaptive limiter ({@code SimpleLimiter} on {@code Gradient2Limit}),
 * which sheds by an estimate of one process's capacity. {@code workers-only} is Sluice's worker
 * shedder alone: the same job as Netflix's, with no store.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Benchmark)
public class SheddingBenchmark {

  /** Where the fleet shedder counts: this JVM, memcached, or nowhere (worker shedder only). */
  @Param({"workers-only", "in-memory", "memcached"})
  public String store;

  private BenchStore counters;
  private RequestLimiter limiter;
  private final Limiter<Void> netflix =
      SimpleLimiter.newBuilder().limit(Gradient2Limit.newDefault()).build();

  @Setup(Level.Trial)
  public void setUp() {
    counters = BenchStore.open(store);
    Shedding.Builder shedding =
        Shedding.builder()
            .classes(
                List.of(
                    PriorityClass.of("critical", 0)
                        .withMethods("POST")
                        .withPath("/api/v1/lead/{id}"),
                    PriorityClass.of("test", 3).withHeader("X-Test-Mode", "true"),
                    PriorityClass.of("writes", 1).withMethods("POST", "PUT", "PATCH", "DELETE"),
                    PriorityClass.of("reads", 2)))
            .workers(1_000_000);
    if (!store.equals("workers-only")) {
      shedding.fleet(1_000_000, 0.2);
    }
    limiter =
        RequestLimiter.builder(counters.counters())
            .rules(RuleSet.builder().shedding(shedding.build()).build())
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
  public boolean netflixGradient2() {
    Optional<Limiter.Listener> l = netflix.acquire(null);
    l.ifPresent(Limiter.Listener::onSuccess);
    return l.isPresent();
  }
}
