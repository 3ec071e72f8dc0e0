package dev.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.it.FleetModels.GcraModel;
import dev.sluice.it.FleetModels.Tat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The fleet harness's token-bucket model joins the intervals its states give the TAT, so a run of
 * requests either outcome explains (after a restart of memcached) keeps a few states, not one per
 * combination, and means the same.
 */
class GcraModelTest {

  private final GcraModel model = new GcraModel(3, 250);

  /** Every request either counted or not, as while the fleet's clock changes. */
  private Set<Tat> eitherOutcome(Set<Tat> states, long lo, long hi, boolean merge) {
    Set<Tat> next = new LinkedHashSet<>(states);
    for (Tat s : states) {
      next.addAll(model.force(s, lo, hi, true));
    }
    return merge ? model.merge(next) : next;
  }

  private static boolean holds(Set<Tat> states, double tat) {
    return states.stream().anyMatch(s -> s.earliest() <= tat && tat <= s.latest());
  }

  @Test
  void requestsEitherOutcomeExplainsKeepFewStatesThatMeanTheSame() {
    Set<Tat> merged = new LinkedHashSet<>(List.of(model.fresh()));
    Set<Tat> all = new LinkedHashSet<>(merged);
    int max = 0;
    for (int i = 0; i < 200; i++) {
      long at = 1_000 + 30L * i;
      merged = eitherOutcome(merged, at - 90, at + 95, true);
      if (i < 12) {
        all = eitherOutcome(all, at - 90, at + 95, false);
        for (double tat = 0; tat < 5_000; tat += 0.5) {
          assertEquals(holds(all, tat), holds(merged, tat), "TAT " + tat + " after " + i);
        }
      }
      max = Math.max(max, merged.size());
    }
    assertTrue(max <= 4, "joined, at most " + max);
    assertTrue(all.size() > 50, "unjoined, 12 requests: " + all.size());
  }

  @Test
  void disjointIntervalsStayApart() {
    Set<Tat> states =
        new LinkedHashSet<>(List.of(new Tat(10, 20), new Tat(30, 40), new Tat(15, 25)));
    assertEquals(Set.of(new Tat(10, 25), new Tat(30, 40)), model.merge(states));
  }
}
