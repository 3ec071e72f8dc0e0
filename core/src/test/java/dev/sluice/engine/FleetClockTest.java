package dev.sluice.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Decision;
import dev.sluice.DecisionListener;
import dev.sluice.RateLimiter;
import dev.sluice.TestSettings;
import dev.sluice.spi.ClockedStore;
import dev.sluice.spi.FakeClock;
import dev.sluice.spi.ReferenceCounterStore;
import dev.sluice.spi.StoreClock;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

/**
 * One clock for a fleet: instances whose hosts' clocks disagree decide on the store's clock, as
 * each measured it, so they share every window.
 */
class FleetClockTest {

  /** A store's clock as one instance measured it: the store's time minus this host's. */
  static final class MeasuredClock implements StoreClock {
    volatile long offset;
    volatile long error = -1;

    @Override
    public long offsetMillis() {
      return offset;
    }

    @Override
    public long errorMillis() {
      return error;
    }
  }

  /** The host's clock of an instance: the true time plus its skew. */
  record Skewed(InstantSource truth, long skewMillis) implements InstantSource {
    @Override
    public java.time.Instant instant() {
      return java.time.Instant.ofEpochMilli(millis());
    }

    @Override
    public long millis() {
      return truth.millis() + skewMillis;
    }
  }

  @Test
  void aLimiterDecidesOnTheStoresClockUnlessGivenAClockOfItsOwn() {
    MeasuredClock measured = new MeasuredClock();
    ClockedStore store = new ClockedStore(new ReferenceCounterStore(), measured);
    FakeClock host = new FakeClock();
    RateLimiter corrected =
        TestSettings.hostClock(RateLimiter.fixedWindow(store), host)
            .tier(1, Duration.ofSeconds(1))
            .build();
    InstantSource time = ((SingleRateLimiter) corrected).engine().clock();
    assertInstanceOf(FleetClock.class, time);
    assertEquals(host.millis(), time.millis(), "0 before the first measurement");
    measured.offset = -30_000;
    measured.error = 2;
    assertEquals(host.millis() - 30_000, time.millis());
    assertEquals(host.millis() - 30_000, time.instant().toEpochMilli());

    RateLimiter given =
        RateLimiter.fixedWindow(store).clock(host).tier(1, Duration.ofSeconds(1)).build();
    assertSame(
        host, ((SingleRateLimiter) given).engine().clock(), "a clock given is read as it is");
  }

  /**
   * A store's clock that keeps its own instant: the store's time, advanced on a monotonic clock
   * (here a fake), whatever the host's clock does.
   */
  static final class KeptClock implements StoreClock {
    final FakeClock store = new FakeClock(1_800_000_010_000L);

    @Override
    public long offsetMillis() {
      return 0;
    }

    @Override
    public long errorMillis() {
      return 1;
    }

    @Override
    public long millis(InstantSource host) {
      return store.millis();
    }
  }

  /**
   * The host's clock stepped 30 s forward, then 60 s back (as NTP steps a clock it finds off): a
   * limiter on a store's clock that keeps its own instant stays in its window, so the window admits
   * its limit once, not once per step.
   */
  @Test
  void aStepOfTheHostsClockDoesNotMoveTheWindow() {
    KeptClock kept = new KeptClock();
    FakeClock host = new FakeClock(1_800_000_010_000L);
    RateLimiter limiter =
        TestSettings.hostClock(
                RateLimiter.fixedWindow(new ClockedStore(new ReferenceCounterStore(), kept)), host)
            .denyCacheSize(0)
            .tier(5, Duration.ofSeconds(30))
            .build();
    InstantSource time = ((SingleRateLimiter) limiter).engine().clock();
    int admitted = 0;
    for (int i = 0; i < 5; i++) {
      admitted += limiter.tryAcquire("k").allowed() ? 1 : 0;
    }
    host.advanceMillis(30_000);
    assertEquals(kept.store.millis(), time.millis(), "the decision's time after the step");
    for (int i = 0; i < 5; i++) {
      admitted += limiter.tryAcquire("k").allowed() ? 1 : 0;
    }
    host.advanceMillis(-60_000);
    kept.store.advanceMillis(1_000);
    for (int i = 0; i < 5; i++) {
      admitted += limiter.tryAcquire("k").allowed() ? 1 : 0;
    }
    assertEquals(5, admitted, "admitted in one window of 5 across two steps of the host's clock");
  }

  /**
   * A token bucket (1 a second, burst 5) emptied, then the host's clock stepped 30 s back: the deny
   * cache's refusal ends a second later on the store's clock, not 31 s later, and the bucket's
   * arrival time is not pushed 30 s ahead by a step forward.
   */
  @Test
  void aStepOfTheHostsClockNeitherHoldsARefusalNorPushesTheArrivalTime() {
    KeptClock kept = new KeptClock();
    FakeClock host = new FakeClock(1_800_000_010_000L);
    RateLimiter limiter =
        TestSettings.hostClock(
                RateLimiter.tokenBucket(new ClockedStore(new ReferenceCounterStore(), kept)), host)
            .tier(1, Duration.ofSeconds(1), 5)
            .build();
    for (int i = 0; i < 5; i++) {
      assertTrue(limiter.tryAcquire("k").allowed(), "the burst, request " + i);
    }
    assertTrue(!limiter.tryAcquire("k").allowed(), "the bucket is empty");
    host.advanceMillis(-30_000);
    kept.store.advanceMillis(1_000);
    assertTrue(limiter.tryAcquire("k").allowed(), "a token a second later, after a step back");
    host.advanceMillis(60_000);
    assertTrue(!limiter.tryAcquire("k").allowed(), "no token yet, after a step forward");
    kept.store.advanceMillis(1_000);
    assertTrue(limiter.tryAcquire("k").allowed(), "a token a second later, after a step forward");
  }

  @Test
  void theListenerIsToldOfEachNewOffsetOnce() {
    MeasuredClock measured = new MeasuredClock();
    List<String> told = new ArrayList<>();
    DecisionListener listener =
        new DecisionListener() {
          @Override
          public void onDecision(List<String> rules, Decision decision, long storeNanos) {}

          @Override
          public void onClockOffset(long offsetMillis, long errorMillis) {
            told.add(offsetMillis + "±" + errorMillis);
          }
        };
    FleetClock clock = new FleetClock(new FakeClock(), measured, listener);
    clock.millis();
    measured.error = 3;
    measured.offset = 1_250;
    clock.millis();
    clock.millis();
    measured.offset = 1_240;
    clock.millis();
    assertEquals(List.of("1250±3", "1240±3"), told);
  }

  @Provide
  Arbitrary<long[]> skews() {
    // Up to two minutes either way, three hosts.
    return Arbitraries.longs().between(-120_000, 120_000).array(long[].class).ofSize(3);
  }

  /**
   * Three instances whose hosts are up to two minutes apart, each having measured the store's clock
   * within {@code error} ms, send requests for one key at true times that keep at least that far
   * from a window's edge: every window admits exactly {@code min(sent, limit)}, as one instance
   * would, for the fixed window and the sliding window's current count alike.
   */
  @Property(tries = 200)
  void aFleetWhoseClocksDisagreeAdmitsExactlyTheLimitInEachWindow(
      @ForAll("skews") long[] skews,
      @ForAll @IntRange(min = 1, max = 30) int limit,
      @ForAll @LongRange(min = 0, max = 20) long error,
      @ForAll @IntRange(min = 1, max = 200) int requests,
      @ForAll long seed) {
    long period = 10_000;
    FakeClock truth = new FakeClock();
    ReferenceCounterStore shared = new ReferenceCounterStore();
    List<RateLimiter> fleet = new ArrayList<>();
    java.util.Random random = new java.util.Random(seed);
    for (long skew : skews) {
      MeasuredClock measured = new MeasuredClock();
      // What the instance measured: the store's clock (the truth here) minus its host's, off by up
      // to the error either way.
      measured.offset = -skew + (error == 0 ? 0 : random.nextLong(-error, error + 1));
      measured.error = error;
      fleet.add(
          TestSettings.hostClock(
                  RateLimiter.fixedWindow(new ClockedStore(shared, measured)),
                  new Skewed(truth, skew))
              .denyCacheSize(0)
              .tier(limit, Duration.ofMillis(period))
              .build());
    }
    TreeMap<Long, int[]> byWindow = new TreeMap<>(); // window -> {sent, admitted}
    for (int i = 0; i < requests; i++) {
      truth.advanceMillis(random.nextInt(400));
      long t = truth.millis();
      long into = Math.floorMod(t, period);
      if (into <= error || into >= period - error - 1) {
        continue; // too near an edge for the measurement to place it
      }
      int[] w = byWindow.computeIfAbsent(Math.floorDiv(t, period), k -> new int[2]);
      w[0]++;
      if (fleet.get(random.nextInt(fleet.size())).tryAcquire("k").allowed()) {
        w[1]++;
      }
    }
    byWindow.forEach(
        (window, w) ->
            assertEquals(
                Math.min(w[0], limit),
                w[1],
                "window " + window + ": sent " + w[0] + " at a limit of " + limit));
  }

  /** The same fleet on its hosts' clocks alone: three windows at once, so three limits. */
  @Test
  void onTheirHostsClocksAloneTheSameFleetAdmitsThreeLimits() {
    FakeClock truth = new FakeClock(1_800_000_005_000L);
    ReferenceCounterStore shared = new ReferenceCounterStore();
    List<RateLimiter> fleet = new ArrayList<>();
    for (long skew : new long[] {0, 30_000, 60_000}) {
      fleet.add(
          RateLimiter.fixedWindow(shared)
              .clock(new Skewed(truth, skew))
              .denyCacheSize(0)
              .tier(20, Duration.ofSeconds(30))
              .build());
    }
    int admitted = 0;
    for (int i = 0; i < 90; i++) {
      if (fleet.get(i % 3).tryAcquire("k").allowed()) {
        admitted++;
      }
    }
    assertEquals(60, admitted);
    assertTrue(admitted > 20, "the skew this clock removes");
  }
}
