package dev.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.it.FleetModels.Fixed;
import dev.sluice.it.FleetModels.FixedModel;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The fleet harness's fixed-window model at a window's start: a refusal an instance places in the
 * window before, within the clock's error, is explained only when that window was full.
 */
class FixedModelTest {

  private final FixedModel model = new FixedModel(2, 1_000);

  private Fixed only(List<Fixed> states) {
    assertEquals(1, states.size(), states::toString);
    return states.get(0);
  }

  @Test
  void aRefusalReachingBackIntoAFullWindowIsExplained() {
    Fixed s = only(model.step(model.fresh(), 0, 10, true));
    s = only(model.step(s, 20, 30, true));
    s = only(model.step(s, 40, 50, false));
    s = only(model.step(s, 1_005, 1_010, true)); // the next window, decided by one instance
    // Another instance, its clock a little behind, still counts the full window: refused.
    assertEquals(List.of(s), model.step(s, 990, 1_012, false));
    // Not when the whole request lies in the new window, where one more passes.
    assertEquals(List.of(), model.step(s, 1_011, 1_020, false));
  }

  @Test
  void aRefusalReachingBackIntoAWindowWithRoomLeftIsAViolation() {
    Fixed s = only(model.step(model.fresh(), 0, 10, true));
    s = only(model.step(s, 1_005, 1_010, true));
    assertEquals(List.of(), model.step(s, 990, 1_012, false));
  }
}
