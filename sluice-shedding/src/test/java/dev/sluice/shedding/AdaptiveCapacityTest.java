package dev.sluice.shedding;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class AdaptiveCapacityTest {

  /** An estimate of 4 that records what it is taught. */
  private static final class Recording implements AdaptiveCapacity {
    final List<Integer> inFlight = new ArrayList<>();

    @Override
    public int capacity() {
      return 4;
    }

    @Override
    public void sample(long startNanos, long rttNanos, int inFlight) {
      this.inFlight.add(inFlight);
    }
  }

  @Test
  void utilizationIsInFlightOverTheEstimateAndEachCompletedRequestTeachesIt() {
    Recording capacity = new Recording();
    LoadShedder shedder = LoadShedder.builder().adaptive(capacity).build();
    assertTrue(shedder.sheddingWorkers());
    Runnable a = shedder.enter();
    Runnable b = shedder.enter();
    assertEquals(0.5, shedder.utilization());
    assertEquals(4, shedder.capacityTier().limit());
    b.run();
    a.run();
    assertEquals(0, shedder.inFlight());
    assertEquals(List.of(2, 1), capacity.inFlight);
  }

  @Test
  void aNamedEstimateWithoutItsModuleSaysWhichModuleToAdd() {
    IllegalStateException e =
        assertThrows(IllegalStateException.class, () -> LoadShedder.builder().adaptive("vegas"));
    assertTrue(e.getMessage().contains("sluice-shedding-adaptive"), e.getMessage());
  }
}
