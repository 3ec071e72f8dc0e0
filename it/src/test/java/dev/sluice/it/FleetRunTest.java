package dev.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.it.FleetRun.Happened;
import dev.sluice.it.FleetRun.Phase;
import dev.sluice.it.FleetSchedule.Kind;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Which of memcached's phases the harness lets a request be decided on: an old one until the
 * instances have had {@link FleetRun#REMEASURE_MILLIS} of reaching memcached to measure the new
 * one. Memcached thawed at 1,000 ms in every case, its tick moved from −900 to −400 ms.
 */
class FleetRunTest {

  private static final List<Phase> MOVED_AT_1000 =
      List.of(new Phase(0, -900), new Phase(1_000, -400));

  /** Frozen from 500 ms, thawed at 1,000, its new tick measured by the harness at 1,600. */
  private static final Happened STALL = new Happened(Kind.STALL, 0, 500, 1_000, 1_600);

  private static List<Long> at(List<Happened> faults, long millis) {
    return FleetRun.deltas(MOVED_AT_1000, faults, millis);
  }

  /** The old phase is accepted 100 ms before {@code untilMillis}, and not 100 ms after. */
  private static void oldPhaseUntil(List<Happened> faults, long untilMillis) {
    assertEquals(List.of(-900L, -400L), at(faults, untilMillis - 100));
    assertEquals(List.of(-400L), at(faults, untilMillis + 100));
  }

  @Test
  void anOldPhaseIsAcceptedForAWhileAfterTheTickMoved() {
    oldPhaseUntil(List.of(STALL), 4_000);
  }

  /** Thawed, then cut off at once: no instance measured the new tick before the flap ended. */
  @Test
  void anOldPhaseIsAcceptedUntilTheInstancesHadTimeToMeasureAfterAFlapThatHidTheMove() {
    List<Happened> faults =
        List.of(
            STALL,
            new Happened(Kind.FLAP, 0, 1_600, 4_000, 4_000),
            new Happened(Kind.KILL_INSTANCE, 1, 6_500, 6_500, 9_000));
    oldPhaseUntil(faults, 7_000);
  }

  /** A flap that began after the instances had time to measure the moved tick extends nothing. */
  @Test
  void aFlapAfterTheInstancesHadTimeToMeasureDoesNotBringTheOldPhaseBack() {
    List<Happened> faults = List.of(STALL, new Happened(Kind.FLAP, 0, 4_100, 8_000, 8_000));
    assertEquals(List.of(-400L), at(faults, 5_000));
  }

  /** Each fault began before the instances had time to measure after the one before. */
  @Test
  void aChainOfFaultsKeepsTheOldPhaseUntilTheInstancesHadTimeAfterTheLast() {
    List<Happened> faults =
        List.of(
            STALL,
            new Happened(Kind.STALL, 0, 2_500, 4_000, 4_900),
            new Happened(Kind.FLAP, 0, 6_500, 9_000, 9_000));
    oldPhaseUntil(faults, 12_000);
  }

  /** A restart cuts the instances off; an eviction leaves memcached answering. */
  @Test
  void aRestartHidesTheMoveAndAnEvictionDoesNot() {
    Happened restart = new Happened(Kind.RESTART_MEMCACHED, 0, 1_500, 2_500, 3_200);
    oldPhaseUntil(List.of(STALL, restart), 5_500);
    Happened evict = new Happened(Kind.EVICT, 0, 1_500, 1_500, 3_000);
    assertEquals(List.of(-400L), at(List.of(STALL, evict), 4_100));
  }

  /** The models treat a request as on either clock for as long. */
  @Test
  void theModelsSeeTheClockChangingUntilTheInstancesHadTimeToMeasure() {
    FleetModels.Faults alone = new FleetModels.Faults(List.of(STALL));
    assertTrue(alone.clockChangingDuring(4_500, 4_500));
    assertFalse(alone.clockChangingDuring(4_700, 4_700));
    FleetModels.Faults hidden =
        new FleetModels.Faults(List.of(STALL, new Happened(Kind.FLAP, 0, 1_600, 4_000, 4_000)));
    assertTrue(hidden.clockChangingDuring(6_900, 6_900));
    assertFalse(hidden.clockChangingDuring(7_100, 7_100));
  }
}
