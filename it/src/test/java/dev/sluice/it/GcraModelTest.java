package dev.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.it.FleetModels.GcraModel;
import dev.sluice.it.FleetModels.Tat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
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

  /**
   * Over random requests (admitted, refused, either, and counters lost), the joined states allow
   * exactly the outcomes the unjoined ones allow, and hold the same arrival times.
   */
  @Test
  void joinedStatesJudgeEveryRequestAsTheUnjoinedDo() {
    for (long seed = 0; seed < 300; seed++) {
      Random r = new Random(seed);
      Set<Tat> all = new LinkedHashSet<>(List.of(model.fresh()));
      Set<Tat> joined = new LinkedHashSet<>(all);
      long at = 0;
      for (int i = 0; i < 10; i++) {
        at += r.nextInt(400);
        long lo = at - r.nextInt(100);
        long hi = at + r.nextInt(100);
        int kind = r.nextInt(4);
        String what = "seed " + seed + ", request " + i + ", kind " + kind;
        if (kind == 3) {
          Set<Tat> a = new LinkedHashSet<>(all);
          all.forEach(t -> a.addAll(model.reset(t)));
          Set<Tat> j = new LinkedHashSet<>(joined);
          joined.forEach(t -> j.addAll(model.reset(t)));
          all = a;
          joined = model.merge(j);
        } else if (kind == 2) {
          all = eitherOutcome(all, lo, hi, false);
          joined = eitherOutcome(joined, lo, hi, true);
        } else {
          boolean admitted = kind == 0;
          Set<Tat> a = new LinkedHashSet<>();
          all.forEach(t -> a.addAll(model.step(t, lo, hi, admitted)));
          Set<Tat> j = new LinkedHashSet<>();
          joined.forEach(t -> j.addAll(model.step(t, lo, hi, admitted)));
          assertEquals(a.isEmpty(), j.isEmpty(), what + ": the same verdict");
          if (a.isEmpty()) {
            continue; // a violation: both go on from the states before
          }
          all = a;
          joined = model.merge(j);
        }
        assertEquals(
            holds(all, Double.NEGATIVE_INFINITY), holds(joined, Double.NEGATIVE_INFINITY), what);
        for (double tat = -500; tat < at + 3_000; tat += 1) {
          assertEquals(holds(all, tat), holds(joined, tat), what + ", TAT " + tat);
        }
      }
    }
  }

  @Test
  void disjointIntervalsStayApart() {
    Set<Tat> states =
        new LinkedHashSet<>(List.of(new Tat(10, 20), new Tat(30, 40), new Tat(15, 25)));
    assertEquals(Set.of(new Tat(10, 25), new Tat(30, 40)), model.merge(states));
  }
}
