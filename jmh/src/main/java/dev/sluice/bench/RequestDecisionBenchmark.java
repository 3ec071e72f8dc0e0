package dev.sluice.bench;

import dev.sluice.Algorithm;
import dev.sluice.Outcome;
import dev.sluice.http.RequestInfo;
import dev.sluice.http.RequestLimiter;
import dev.sluice.http.Rule;
import dev.sluice.http.RuleSet;
import dev.sluice.store.inmemory.InMemoryCounterStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
 * the client address. {@code rules}: how many rules are in force; one matches the request, the
 * others ({@link #otherRules}) do not, though many share its first segments.
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

  @Param({"1", "3", "10", "1000", "10000"})
  public int rules;

  /**
   * The limiter's clock: {@code system}, an HTTP limiter's default, or {@code coarse}, the engine's
   * coarse clock that key limiters read by default, to show what the reading costs.
   */
  @Param({"system", "coarse"})
  public String clock;

  private RequestLimiter limiter;
  private final Outcome outcome = new Outcome();
  private final RequestInfo request = new BenchRequest("/api/v1/report");

  @Setup
  public void setUp() {
    RuleSet.Builder set =
        RuleSet.builder()
            .rule(
                Rule.builder("report")
                    .methods("GET")
                    .path("/api/v1/report")
                    .key(key)
                    .algorithm(Algorithm.SLIDING_WINDOW)
                    .tier(1_000_000_000, Duration.ofSeconds(1))
                    .build());
    otherRules(rules - 1, key).forEach(set::rule);
    RequestLimiter.Builder b =
        RequestLimiter.builder(InMemoryCounterStore.create()).rules(set.build());
    if (clock.equals("coarse")) {
      b.clock(dev.sluice.engine.CoarseClock.shared());
    }
    limiter = b.build();
    if (!limiter.decide(request, outcome) || !outcome.applied()) {
      throw new IllegalStateException("the rule should apply and allow");
    }
  }

  /**
   * {@code n} rules that {@code GET /api/v1/report} does not match: a quarter each of {@code GET
   * /api/v1/r{i}/{id}}, prefix {@code /svc{i}}, {@code POST /api/v2/r{i}/**} and {@code /t{i}/},
   * any segment, {@code /items} for every method.
   */
  static List<Rule> otherRules(int n, String key) {
    List<Rule> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      Rule.Builder b =
          Rule.builder("other-" + i).key(key).tier(1_000_000_000, Duration.ofSeconds(1));
      switch (i % 4) {
        case 0 -> b.methods("GET").path("/api/v1/r" + i + "/{id}");
        case 1 -> b.pathPrefix("/svc" + i);
        case 2 -> b.methods("POST").path("/api/v2/r" + i + "/**");
        default -> b.path("/t" + i + "/*/items");
      }
      out.add(b.build());
    }
    return out;
  }

  @Benchmark
  public boolean decide() {
    return limiter.decide(request, outcome);
  }
}
