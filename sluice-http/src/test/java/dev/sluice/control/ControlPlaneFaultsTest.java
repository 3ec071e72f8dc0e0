package dev.sluice.control;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.DecisionListener;
import dev.sluice.RateLimiter;
import dev.sluice.Tier;
import dev.sluice.http.RequestLimiter;
import dev.sluice.http.Rule;
import dev.sluice.http.RuleSet;
import dev.sluice.http.TestRequest;
import dev.sluice.shedding.LoadShedder;
import dev.sluice.spi.FakeClock;
import dev.sluice.spi.ReferenceCounterStore;
import dev.sluice.spi.SharedValues;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What the knobs, the worker shedder and the governor do with values they cannot use: a knob that
 * its target cannot take is ignored and blocks nothing else; a NaN signal is skipped and counted; a
 * governor taking over keeps the fleet's rate and writes back a knob the store lost.
 */
class ControlPlaneFaultsTest {

  private final FakeClock clock = new FakeClock();
  private final ReferenceCounterStore store = new ReferenceCounterStore().clock(clock);

  private static final Rule BUCKET =
      Rule.builder("search-bucket")
          .path("/search")
          .key("header:X-Api-Key")
          .algorithm(Algorithm.TOKEN_BUCKET)
          .tier(Tier.of(60, Duration.ofMinutes(1), 5))
          .build();

  private static final Rule WINDOW =
      Rule.builder("api")
          .path("/**")
          .key("header:X-Api-Key")
          .tier(100, Duration.ofMinutes(1))
          .build();

  private RequestLimiter limiter() {
    return RequestLimiter.builder(store)
        .rules(RuleSet.builder().rule(BUCKET).rule(WINDOW).build())
        .clock(clock)
        .build();
  }

  @Test
  void aLimitKnobARuleCannotTakeIsIgnoredAndBlocksNoOtherKnobReloadOrStart() {
    RequestLimiter l = limiter();
    l.applyKnobs(
        Knobs.NONE.with("rule:search-bucket", "limit", "2000000").with("rule:api", "limit", "7"));
    assertEquals(1, l.knobProblems().size(), l.knobProblems().toString());
    assertTrue(l.knobProblems().get(0).contains("1000000"), "names the bound");
    TestRequest search = TestRequest.get("/search").header("X-Api-Key", "k");
    assertEquals(5, l.decide(search).orElseThrow().limit(), "the bucket keeps its own size");
    assertEquals(
        7,
        l.decide(TestRequest.get("/a").header("X-Api-Key", "k")).orElseThrow().limit(),
        "the other knob applies");

    l.applyKnobs(
        Knobs.NONE
            .with("rule:search-bucket", "limit", "2000000")
            .with("global", "enabled", "false"));
    assertTrue(l.decide(search).isEmpty(), "a later knob applies");

    l.update(RuleSet.builder().rule(BUCKET).rule(WINDOW).build());
    assertTrue(l.decide(search).isEmpty(), "a rules reload is accepted");

    SharedValues values = store.sharedValues().orElseThrow();
    Knobs.change(values, k -> k.with("rule:search-bucket", "limit", "2000000"));
    RequestLimiter started =
        RequestLimiter.builder(store)
            .rules(RuleSet.builder().rule(BUCKET).build())
            .clock(clock)
            .knobs(Duration.ofSeconds(1))
            .build();
    try {
      assertTrue(started.decide(search).isPresent(), "an instance starts under the bad knob");
    } finally {
      started.close();
    }
  }

  @Test
  void aThrottleKnobTheThrottleCannotTakeIsIgnored() {
    Throttles th = Throttles.builder(store).clock(clock).build();
    Throttle email = th.throttle("email", 2, 1, Duration.ofSeconds(1));
    th.applyKnobs(Knobs.NONE.with("throttle:email", "burst", "1e12"));
    assertEquals(1, email.burst(), "keeps its own burst");
    th.applyKnobs(Knobs.NONE.with("throttle:email", "rate", "3"));
    assertEquals(3, email.rate(), "the next knob applies");
  }

  @Test
  void aNanUtilizationSampleIsSkippedCountedAndSheddingGoesOn() {
    Deque<Double> samples = new ArrayDeque<>(List.of(1.0, 1.0, Double.NaN, 1.0, 1.0, 1.0));
    List<String> ignored = new java.util.ArrayList<>();
    LoadShedder s =
        LoadShedder.builder()
            .workers(10)
            .utilization(() -> samples.isEmpty() ? 1.0 : samples.poll())
            .delay(Duration.ZERO)
            .ramp(Duration.ofSeconds(10))
            .clock(clock)
            .listener(
                new DecisionListener() {
                  @Override
                  public void onDecision(List<String> rules, Decision d, long storeNanos) {}

                  @Override
                  public void onIgnoredSignal(String source) {
                    ignored.add(source);
                  }
                })
            .build();
    double last = s.amount();
    for (int i = 0; i < 8; i++) {
      clock.advance(Duration.ofSeconds(1));
      double a = s.amount();
      assertTrue(Double.isFinite(a), "sample " + i + ": " + a);
      assertTrue(a >= last, "at utilization 1 the amount never falls: " + last + " -> " + a);
      last = a;
    }
    assertTrue(last > 0, "shedding at utilization 1: " + last);
    assertEquals(1, s.ignoredSignals());
    assertEquals(List.of(LoadShedder.WORKERS), ignored);
  }

  /** A clock stepped back an hour: the shedder samples on, and sheds less as the load goes. */
  @Test
  void aClockSteppedBackDoesNotFreezeTheSheddingAmount() {
    double[] u = {1};
    LoadShedder s =
        LoadShedder.builder()
            .workers(10)
            .utilization(() -> u[0])
            .delay(Duration.ZERO)
            .ramp(Duration.ofSeconds(10))
            .clock(clock)
            .build();
    for (int i = 0; i < 12; i++) {
      clock.advance(Duration.ofSeconds(1));
      s.amount();
    }
    double shedding = s.amount();
    assertTrue(shedding > 0, "shedding at utilization 1: " + shedding);
    clock.set(clock.millis() - 3_600_000);
    u[0] = 0;
    for (int i = 0; i < 30; i++) {
      clock.advance(Duration.ofSeconds(1));
      s.amount();
    }
    assertTrue(s.amount() < shedding, "the amount came down: " + s.amount());
  }

  @Test
  void aGovernorTakingOverFromUnlimitedStartsAtItsHighestRateAndRewritesALostKnob() {
    SharedValues values = store.sharedValues().orElseThrow();
    Knobs.change(values, k -> k.with("throttle:email", "rate", "-1"));
    double[] load = {1};
    Governor g =
        Governor.builder(values, "email")
            .setpoint(2)
            .gains(24, 0.8, 0)
            .maxRate(300)
            .tripLevel(4)
            .interval(Duration.ofSeconds(5))
            .clock(clock)
            .signal(() -> load[0])
            .build();
    g.tick();
    assertEquals(300, rate(values), "from unlimited to the highest rate it sets, not to ~0");

    load[0] = 5; // the breaker trips: 0 and held there
    clock.advance(Duration.ofSeconds(5));
    g.tick();
    assertEquals(0, rate(values));
    Knobs.change(values, k -> k.without("throttle:email")); // memcached lost it
    clock.advance(Duration.ofSeconds(5));
    g.tick();
    assertEquals(0, rate(values), "written again while the rate holds still");

    load[0] = Double.POSITIVE_INFINITY;
    clock.advance(Duration.ofSeconds(5));
    g.tick();
    assertEquals(1, g.ignoredSignals());
    assertEquals(0, rate(values));
  }

  @Test
  void aDenyCacheTooLargeForAnArrayIsRefusedWhenConfigured() {
    assertThrows(
        IllegalArgumentException.class,
        () -> RateLimiter.fixedWindow(store).denyCacheSize(1 << 30));
  }

  private static double rate(SharedValues values) {
    return Knobs.parse(values.get(Knobs.VALUE_NAME).orElseThrow().value())
        .throttleRate("email")
        .orElseThrow();
  }
}
