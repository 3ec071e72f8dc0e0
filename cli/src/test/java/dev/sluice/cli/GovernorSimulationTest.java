package dev.sluice.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.control.Governor;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The governor of docs/GOVERNOR.md through its simulated spike. */
class GovernorSimulationTest {

  /** The governor of docs/GOVERNOR.md: hold a load of 2, trip at 4, at most 300/s. */
  static Governor.Builder docs(Governor.Builder b) {
    return b.setpoint(2)
        .gains(24, 0.8, 0)
        .maxRate(300)
        .tripLevel(4)
        .interval(Duration.ofSeconds(5))
        .rampUp(Duration.ofMinutes(2));
  }

  private static final List<GovernorSimulation.Point> RUN =
      GovernorSimulation.run(GovernorSimulation.Plant.example(), GovernorSimulationTest::docs);

  private static final int SPIKE = 1_200;

  @Test
  void beforeTheSpikeItCruisesAtTheMaximumRate() {
    for (GovernorSimulation.Point p : RUN.subList(600, SPIKE)) {
      assertEquals(300, p.rate(), 1e-9, "at " + p.second() + " s");
      assertEquals(1.5, p.load(), 0.05);
    }
  }

  @Test
  void theSpikeTripsTheBreakerAndTheRateDropsToZeroAtOnce() {
    int crossed = -1;
    int tripped = -1;
    for (GovernorSimulation.Point p : RUN.subList(SPIKE, RUN.size())) {
      if (crossed < 0 && p.signal() >= 4) {
        crossed = (int) p.second();
      }
      if (tripped < 0 && p.tripped()) {
        tripped = (int) p.second();
        assertEquals(0, p.rate(), "the breaker sets 0 at once, not by PID steps");
      }
    }
    assertTrue(crossed > 0 && tripped >= crossed, "crossed " + crossed + ", tripped " + tripped);
    assertTrue(tripped - crossed <= 5, "within one tick of seeing the trip level: " + tripped);
    double peak =
        RUN.subList(SPIKE, RUN.size()).stream().mapToDouble(p -> p.load()).max().orElse(0);
    assertTrue(peak < 7.5 * 0.8, "the load never reaches what 300/s would make (7.5): " + peak);
  }

  @Test
  void afterTheSpikeItHoldsTheSetpointWithinFivePercentWithoutOscillating() {
    List<GovernorSimulation.Point> settled = RUN.subList(SPIKE + 600, RUN.size());
    double minRate = Double.MAX_VALUE;
    double maxRate = 0;
    int crossings = 0;
    for (int i = 0; i < settled.size(); i++) {
      GovernorSimulation.Point p = settled.get(i);
      assertEquals(2, p.load(), 0.1, "load at " + p.second() + " s");
      minRate = Math.min(minRate, p.rate());
      maxRate = Math.max(maxRate, p.rate());
      if (i > 0 && (settled.get(i - 1).load() - 2) * (p.load() - 2) < 0) {
        crossings++;
      }
    }
    assertTrue(maxRate - minRate < 0.02 * maxRate, "rate swings " + minRate + ".." + maxRate);
    assertTrue(crossings <= 2, "no sustained oscillation: " + crossings + " setpoint crossings");
  }

  @Test
  void aGovernorWithoutTheRampChasesTheLateSignal() {
    // The contrast docs/GOVERNOR.md draws: the same gains tripled with no ramp overshoot.
    List<GovernorSimulation.Point> hot =
        GovernorSimulation.run(
            GovernorSimulation.Plant.example(),
            b -> docs(b).gains(72, 2.4, 0).rampUp(Duration.ZERO));
    double min = Double.MAX_VALUE;
    double max = 0;
    for (GovernorSimulation.Point p : hot.subList(SPIKE + 600, hot.size())) {
      min = Math.min(min, p.load());
      max = Math.max(max, p.load());
    }
    assertTrue(max - min > 0.5, "it oscillates: load " + min + ".." + max);
  }
}
