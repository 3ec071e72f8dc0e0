package dev.sluice.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The worker-utilization shedder through an incident on a simulated clock (docs/RELIABILITY.md):
 * normal load, four times capacity for five minutes, normal again.
 */
class SheddingIncidentTest {

  private static final int CRITICAL = 0;
  private static final int WRITES = 1;
  private static final int READS = 2;
  private static final int TEST = 3;

  private final List<SheddingSimulation.Point> run =
      SheddingSimulation.run(
          SheddingSimulation.Incident.example(), Duration.ofSeconds(28), Duration.ofMinutes(2));

  private long firstShed(int cls) {
    return run.stream().filter(p -> p.shed()[cls] > 0).findFirst().orElseThrow().second();
  }

  @Test
  void sheddingStartsAfterAboutTwentyEightSecondsOfOverloadLowestClassFirst() {
    long overload = 60;
    long test = firstShed(TEST);
    assertTrue(test >= overload + 27 && test <= overload + 30, "test traffic shed from " + test);
    assertTrue(firstShed(READS) > test, "reads after test traffic");
    assertTrue(firstShed(WRITES) > firstShed(READS), "writes after reads");
    assertTrue(run.stream().allMatch(p -> p.shed()[CRITICAL] == 0), "critical is never shed");
  }

  @Test
  void itSettlesIntoTheDeadZoneWithCriticalServedAndNoOscillation() {
    // The incident's last minute: settled just above the dead zone, critical all served.
    for (SheddingSimulation.Point p : run.subList(300, 360)) {
      assertTrue(p.utilization() >= 0.7 && p.utilization() <= 0.85, p.second() + ": " + p);
      assertEquals(1.0, p.success()[CRITICAL], 1e-9, "at " + p.second());
      assertEquals(1.0, p.shed()[TEST], 1e-9);
    }
    // The amount only rises through the incident and only falls after it: one turn, no flapping.
    int turns = 0;
    double lastStep = 0;
    for (int i = 1; i < run.size(); i++) {
      double step = run.get(i).amount() - run.get(i - 1).amount();
      if (Math.abs(step) < 1e-12) {
        continue;
      }
      if (lastStep != 0 && Math.signum(step) != Math.signum(lastStep)) {
        turns++;
      }
      lastStep = step;
    }
    assertEquals(1, turns, "rise, then fall");
  }

  @Test
  void afterTheIncidentTrafficComesBackSlowlyThenFully() {
    SheddingSimulation.Point end = run.get(360);
    assertTrue(end.shed()[TEST] > 0.99, "still shedding test traffic as the incident ends");
    SheddingSimulation.Point minuteLater = run.get(420);
    assertTrue(minuteLater.shed()[TEST] > 0, "a minute later, some still shed: no sudden return");
    SheddingSimulation.Point last = run.get(run.size() - 1);
    for (double s : last.success()) {
      assertEquals(1.0, s, 1e-9, "all back by the end: " + last);
    }
    assertTrue(last.amount() < 0, "resting again");
  }
}
