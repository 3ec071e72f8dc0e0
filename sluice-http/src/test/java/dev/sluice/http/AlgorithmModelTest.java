package dev.sluice.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.Outcome;
import dev.sluice.RateLimiter;
import dev.sluice.Slots;
import dev.sluice.Tier;
import dev.sluice.control.Knobs;
import dev.sluice.spi.FakeClock;
import dev.sluice.spi.ReferenceCounterStore;
import java.math.BigInteger;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Each algorithm against an exact reference model, over generated arrivals: random gaps (from 0 to
 * past a full refill), permits, limit changes through the {@code limit} knob, shadow flips and
 * completions. The guarantees these check are the in-memory rows of docs/RELIABILITY.md.
 */
class AlgorithmModelTest {

  /** One step: the clock moves {@code gapMillis}, then a request of {@code permits}. */
  record Step(long gapMillis, int permits, int knob) {}

  @Provide
  Arbitrary<List<Step>> steps() {
    Arbitrary<Long> gaps =
        Arbitraries.frequencyOf(
            net.jqwik.api.Tuple.of(6, Arbitraries.longs().between(0, 50)),
            net.jqwik.api.Tuple.of(3, Arbitraries.longs().between(0, 2_000)),
            net.jqwik.api.Tuple.of(1, Arbitraries.longs().between(0, 120_000)));
    Arbitrary<Integer> permits =
        Arbitraries.frequencyOf(
            net.jqwik.api.Tuple.of(8, Arbitraries.just(1)),
            net.jqwik.api.Tuple.of(2, Arbitraries.integers().between(1, 12)));
    // 0: no change; else the limit knob is set to this (or cleared, for -1).
    Arbitrary<Integer> knobs =
        Arbitraries.frequencyOf(
            net.jqwik.api.Tuple.of(20, Arbitraries.just(0)),
            net.jqwik.api.Tuple.of(1, Arbitraries.of(-1, 1, 2, 4, 5, 8, 10, 20, 25, 40)));
    return Combinators.combine(gaps, permits, knobs).as(Step::new).list().ofMaxSize(200);
  }

  /**
   * Token bucket, exact: a GCRA in exact fractions, kept as the time until the bucket is full. A
   * rate change keeps that time (the stored TAT), so a knob never refills nor locks out a bucket.
   */
  @Property(tries = 300)
  void aTokenBucketDecidesExactlyAsAGcraInExactArithmetic(
      @ForAll("steps") List<Step> steps,
      @ForAll("rates") int rate,
      @ForAll("periods") long period) {
    FakeClock clock = new FakeClock();
    Rule rule =
        Rule.builder("bucket")
            .path("/**")
            .key("header:K")
            .algorithm(Algorithm.TOKEN_BUCKET)
            .tier(Tier.of(rate, Duration.ofMillis(period), rate))
            .build();
    RequestLimiter l =
        RequestLimiter.builder(new ReferenceCounterStore())
            .rules(RuleSet.builder().rule(rule).build())
            .clock(clock)
            .denyCacheSize(0)
            .build();
    TestRequest request = TestRequest.get("/a").header("K", "k");
    long r = rate;
    // Time until full, in ms, as numerator / denominator.
    BigInteger num = BigInteger.ZERO;
    BigInteger den = BigInteger.ONE;
    for (Step s : steps) {
      clock.advanceMillis(s.gapMillis());
      num = num.subtract(BigInteger.valueOf(s.gapMillis()).multiply(den)).max(BigInteger.ZERO);
      if (s.knob() != 0) {
        r = s.knob() < 0 ? rate : s.knob();
        l.applyKnobs(
            s.knob() < 0 ? Knobs.NONE : Knobs.NONE.with("rule:bucket", "limit", "" + s.knob()));
      }
      // Rates are chosen to divide a period into whole nanoseconds: the implementation is exact.
      // One token a request: a rule's request asks for one permit.
      BigInteger cost = BigInteger.valueOf(period);
      BigInteger full = BigInteger.valueOf(r * period);
      // admit iff (num/den + permits*period/r) <= burst*period/r, with burst = r
      BigInteger lhs = num.multiply(BigInteger.valueOf(r)).add(cost.multiply(den));
      boolean admit = lhs.compareTo(full.multiply(den)) <= 0;
      Outcome out = new Outcome();
      l.decide(request, out);
      assertEquals(admit, out.allowed(), "step " + s + " at rate " + r);
      if (admit) {
        // num/den += permits*period/r
        num = num.multiply(BigInteger.valueOf(r)).add(cost.multiply(den));
        den = den.multiply(BigInteger.valueOf(r));
        BigInteger g = num.gcd(den);
        if (g.signum() > 0) {
          num = num.divide(g);
          den = den.divide(g);
        }
      }
    }
  }

  @Provide
  Arbitrary<Integer> rates() {
    return Arbitraries.of(1, 2, 4, 5, 8, 10, 20, 25, 40);
  }

  @Provide
  Arbitrary<Long> periods() {
    return Arbitraries.of(1_000L, 10_000L, 60_000L);
  }

  /** Fixed window, exact: a window admits a request iff its count plus the request fits. */
  @Property(tries = 300)
  void aFixedWindowAdmitsExactlyWhatFitsInTheWindow(
      @ForAll("steps") List<Step> steps,
      @ForAll("rates") int limit,
      @ForAll("periods") long period) {
    FakeClock clock = new FakeClock();
    RateLimiter l =
        RateLimiter.fixedWindow(new ReferenceCounterStore())
            .tier(limit, Duration.ofMillis(period))
            .clock(clock)
            .build();
    long window = Long.MIN_VALUE;
    long count = 0;
    for (Step s : steps) {
      clock.advanceMillis(s.gapMillis());
      long w = clock.millis() / period;
      if (w != window) {
        window = w;
        count = 0;
      }
      boolean admit = count + s.permits() <= limit;
      assertEquals(admit, l.tryAcquire("k", s.permits()).allowed(), "step " + s);
      if (admit) {
        count += s.permits();
      }
    }
  }

  /**
   * Sliding window: never more than the limit in one fixed window, and never more than twice the
   * limit in any span of one period (the estimate weighs the previous window evenly).
   */
  @Property(tries = 300)
  void aSlidingWindowStaysWithinItsBounds(
      @ForAll("steps") List<Step> steps,
      @ForAll("rates") int limit,
      @ForAll("periods") long period) {
    FakeClock clock = new FakeClock();
    RateLimiter l =
        RateLimiter.slidingWindow(new ReferenceCounterStore())
            .tier(limit, Duration.ofMillis(period))
            .clock(clock)
            .build();
    Deque<long[]> admitted = new ArrayDeque<>(); // {time, permits}
    long inSpan = 0;
    for (Step s : steps) {
      clock.advanceMillis(s.gapMillis());
      long now = clock.millis();
      if (l.tryAcquire("k", s.permits()).allowed()) {
        admitted.add(new long[] {now, s.permits()});
        inSpan += s.permits();
      }
      while (!admitted.isEmpty() && admitted.peekFirst()[0] <= now - period) {
        inSpan -= admitted.pollFirst()[1];
      }
      assertTrue(inSpan <= 2L * limit, "span of one period held " + inSpan);
      long windowStart = now / period * period;
      long inWindow = admitted.stream().filter(a -> a[0] >= windowStart).mapToLong(a -> a[1]).sum();
      assertTrue(inWindow <= limit, "window held " + inWindow);
    }
  }

  /**
   * Concurrency, exact while no request outlives its slot's time to live: a request is admitted iff
   * fewer than the limit are in flight; shadow flips and releases keep the count exact.
   */
  @Property(tries = 300)
  void aConcurrencyLimitAdmitsIffASlotIsFree(
      @ForAll("steps") List<Step> steps, @ForAll("rates") int limit) {
    FakeClock clock = new FakeClock();
    Rule rule =
        Rule.builder("slots")
            .path("/**")
            .key("header:K")
            .concurrency(limit, Duration.ofSeconds(30))
            .build();
    RequestLimiter l =
        RequestLimiter.builder(new ReferenceCounterStore())
            .rules(RuleSet.builder().rule(rule).build())
            .clock(clock)
            .build();
    TestRequest request = TestRequest.get("/a").header("K", "k");
    List<Slots> inFlight = new ArrayList<>();
    boolean shadow = false;
    for (Step s : steps) {
      clock.advanceMillis(Math.min(s.gapMillis(), 2_000));
      if (s.knob() != 0) {
        shadow = !shadow;
        l.applyKnobs(shadow ? Knobs.NONE.with("rule:slots", "shadow", "true") : Knobs.NONE);
        // Shadow requests ran uncounted; start enforcing from an empty instance.
        inFlight.forEach(Slots::release);
        inFlight.clear();
      }
      // Requests complete in any order; none lives past 20 s (the slots live 30-60 s).
      for (int i = 0; i < s.permits() % 4 && !inFlight.isEmpty(); i++) {
        inFlight.remove((int) (s.gapMillis() % inFlight.size())).release();
      }
      Outcome out = new Outcome();
      boolean admitted = l.decide(request, out);
      if (!shadow) {
        assertEquals(inFlight.size() < limit, admitted, inFlight.size() + " in flight");
      }
      if (admitted) {
        inFlight.add(l.slots(out));
      }
      if (clock.millis() % 20_000 < 2_000) {
        inFlight.forEach(Slots::release);
        inFlight.clear();
      }
    }
  }
}
