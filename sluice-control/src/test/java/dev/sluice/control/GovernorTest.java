package dev.sluice.control;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.spi.FakeClock;
import dev.sluice.spi.ReferenceCounterStore;
import dev.sluice.spi.SharedValues;
import java.time.Duration;
import java.util.OptionalDouble;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class GovernorTest {

  /** The governor of docs/GOVERNOR.md: hold a load of 2, trip at 4, at most 300/s. */
  static Governor.Builder docs(Governor.Builder b) {
    return b.setpoint(2)
        .gains(24, 0.8, 0)
        .maxRate(300)
        .tripLevel(4)
        .interval(Duration.ofSeconds(5))
        .rampUp(Duration.ofMinutes(2));
  }

  @Test
  void oneInstanceSteersAndAnotherTakesOverWhenItDies() {
    FakeClock clock = new FakeClock();
    SharedValues values = new ReferenceCounterStore().clock(clock).sharedValues().orElseThrow();
    double[] load = {1};
    Governor a =
        docs(Governor.builder(values, "reindex"))
            .clock(clock)
            .signal(() -> load[0])
            .owner("a")
            .build();
    Governor b =
        docs(Governor.builder(values, "reindex"))
            .clock(clock)
            .signal(() -> load[0])
            .owner("b")
            .build();
    for (int i = 0; i < 12; i++) {
      a.tick();
      b.tick();
      clock.advance(Duration.ofSeconds(5));
    }
    assertTrue(a.state().leader());
    assertFalse(b.state().leader(), "one leader at a time");
    double rate = rate(values, "reindex");
    assertTrue(rate > 0, "a raised the rate: " + rate);
    // a dies: it ticks no more. Within 3 intervals its lease expires and b takes over from a's
    // rate.
    for (int i = 0; i < 3; i++) {
      clock.advance(Duration.ofSeconds(5));
      b.tick();
    }
    assertTrue(b.state().leader(), "b took over within 3 intervals plus a tick");
    assertTrue(
        rate(values, "reindex") >= rate,
        "from the rate in force, not from 0: " + rate(values, "reindex"));
  }

  @Test
  void aFailingOrNonsenseSignalLeavesTheRateWhereItIs() {
    FakeClock clock = new FakeClock();
    SharedValues values = new ReferenceCounterStore().clock(clock).sharedValues().orElseThrow();
    AtomicReference<Double> load = new AtomicReference<>(1.0);
    Governor g = email(values, clock, load);
    for (int i = 0; i < 6; i++) {
      g.tick();
      clock.advance(Duration.ofSeconds(5));
    }
    double before = rate(values, "email");
    assertTrue(before > 0);
    load.set(null);
    g.tick();
    load.set(Double.NaN);
    clock.advance(Duration.ofSeconds(5));
    g.tick();
    assertEquals(before, rate(values, "email"));
  }

  /**
   * After ten minutes without a signal, the first good tick raises the rate by at most two
   * intervals' ramp (300/s over 2 minutes: 2.5/s a second), not by the gap's worth.
   */
  @Test
  void aGapInTheSignalDoesNotLetTheRateJump() {
    FakeClock clock = new FakeClock();
    SharedValues values = new ReferenceCounterStore().clock(clock).sharedValues().orElseThrow();
    AtomicReference<Double> load = new AtomicReference<>(1.0);
    Governor g = email(values, clock, load);
    for (int i = 0; i < 6; i++) {
      g.tick();
      clock.advance(Duration.ofSeconds(5));
    }
    double before = rate(values, "email");
    load.set(null);
    for (int i = 0; i < 120; i++) {
      g.tick();
      clock.advance(Duration.ofSeconds(5));
    }
    load.set(1.0);
    g.tick();
    double after = rate(values, "email");
    assertTrue(after - before <= 2 * 5 * 2.5 + 1e-9, before + " -> " + after);
  }

  /**
   * The docs' governor of throttle "email", reading {@code load}; null reads as a failed signal.
   */
  private static Governor email(
      SharedValues values, FakeClock clock, AtomicReference<Double> load) {
    return docs(Governor.builder(values, "email"))
        .clock(clock)
        .signal(
            () -> {
              Double v = load.get();
              if (v == null) {
                throw new IllegalStateException("prometheus down");
              }
              return v;
            })
        .build();
  }

  private static double rate(SharedValues values, String throttle) {
    return values
        .get(Knobs.VALUE_NAME)
        .map(v -> Knobs.parse(v.value()).throttleRate(throttle))
        .orElse(OptionalDouble.empty())
        .orElse(0);
  }
}
