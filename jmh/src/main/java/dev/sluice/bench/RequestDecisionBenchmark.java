package dev.sluice.bench;

import dev.sluice.Algorithm;
import dev.sluice.Outcome;
import dev.sluice.http.RequestInfo;
import dev.sluice.http.RequestLimiter;
import dev.sluice.http.Rule;
import dev.sluice.http.RuleSet;
import dev.sluice.store.inmemory.InMemoryCounterStore;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The decision call the filters make, {@link RequestLimiter#decide(RequestInfo, Outcome)}, on the
 * in-memory store: path matching, key resolution and the engine, without a web framework. Run with
 * {@code -prof gc} to see what it allocates. {@code key}: the identity comes from a header, or from
 * the client address.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Thread)
public class RequestDecisionBenchmark {

  @Param({"header:X-Api-Key", "ip"})
  public String key;

  private RequestLimiter limiter;
  private final Outcome outcome = new Outcome();
  private final RequestInfo request = new BenchRequest("/api/v1/report");

  @Setup
  public void setUp() {
    limiter =
        RequestLimiter.builder(InMemoryCounterStore.create())
            .rules(
                RuleSet.builder()
                    .rule(
                        Rule.builder("report")
                            .methods("GET")
                            .path("/api/v1/report")
                            .key(key)
                            .algorithm(Algorithm.SLIDING_WINDOW)
                            .tier(1_000_000_000, Duration.ofSeconds(1))
                            .build())
                    .build())
            .build();
    if (!limiter.decide(request, outcome) || !outcome.applied()) {
      throw new IllegalStateException("the rule should apply and allow");
    }
  }

  @Benchmark
  public boolean decide() {
    return limiter.decide(request, outcome);
  }
}
