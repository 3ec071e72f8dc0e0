package dev.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.it.FleetRun.Happened;
import dev.sluice.it.FleetRun.Phase;
import dev.sluice.it.FleetSchedule.Kind;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Which of memcached's phases the harness lets a request be decided on: an old one until the
 * instances have reached memcached and had time to measure the new one.
 */
class FleetRunTest {

  private static final List<Phase> MOVED_AT_1000 =
      List.of(new Phase(0, -900), new Phase(1_000, -400));

  @Test
  void anOldPhaseIsAcceptedForAWhileAfterTheTickMoved() {
    List<Happened> stall = List.of(new Happened(Kind.STALL, 0, 500, 1_000));
    assertEquals(List.of(-900L, -400L), FleetRun.deltas(MOVED_AT_1000, stall, 3_900));
    assertEquals(List.of(-400L), FleetRun.deltas(MOVED_AT_1000, stall, 4_100));
  }

  /** Frozen, then cut off at once: no instance measured the new tick before the flap ended. */
  @Test
  void anOldPhaseIsAcceptedUntilTheInstancesHadTimeToMeasureAfterTheFaultsThatHidTheMove() {
    List<Happened> faults =
        List.of(
            new Happened(Kind.STALL, 0, 500, 1_500),
            new Happened(Kind.FLAP, 0, 1_500, 4_000),
            new Happened(Kind.KILL_INSTANCE, 1, 6_500, 9_000));
    assertEquals(List.of(-900L, -400L), FleetRun.deltas(MOVED_AT_1000, faults, 6_900));
    assertEquals(List.of(-400L), FleetRun.deltas(MOVED_AT_1000, faults, 7_100));
  }

  /** A flap that began after the instances had time to measure the moved tick extends nothing. */
  @Test
  void aFlapAfterTheInstancesMeasuredTheMoveDoesNotBringTheOldPhaseBack() {
    List<Happened> faults =
        List.of(new Happened(Kind.STALL, 0, 500, 1_000), new Happened(Kind.FLAP, 0, 4_100, 8_000));
    assertEquals(List.of(-400L), FleetRun.deltas(MOVED_AT_1000, faults, 5_000));
  }
}
