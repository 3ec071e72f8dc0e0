package dev.sluice.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterUpdate;
import dev.sluice.spi.Counts;
import dev.sluice.spi.FakeClock;
import dev.sluice.spi.ReferenceCounterStore;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/**
 * The fleet's size under a store cut shorter than one beat: every instance of a fleet that beats at
 * the same point of each window (give or take {@link #SPREAD} ms) keeps counting the whole fleet,
 * whichever of its instances the cut reaches and whichever beat it falls on.
 */
class FleetSizeTest {

  private static final long BEAT = FleetSize.BEAT_MILLIS;

  /** How far apart the instances' beats of one window may be, on the fleet's clock. */
  private static final int SPREAD = 100;

  /** How many windows each run beats through. */
  private static final int WINDOWS = 10;

  /** A view of the shared store that fails, for a chosen instance, during the cut. */
  private static final class Cut implements CounterStore {
    private final CounterStore shared;
    private final FakeClock clock;
    private final boolean reached;
    private final long from;
    private final long until;

    Cut(CounterStore shared, FakeClock clock, boolean reached, long from, long until) {
      this.shared = shared;
      this.clock = clock;
      this.reached = reached;
      this.from = from;
      this.until = until;
    }

    private void check() {
      long now = clock.millis();
      if (reached && now >= from && now < until) {
        throw new IllegalStateException("store cut off");
      }
    }

    @Override
    public Counts increment(List<CounterUpdate> updates) {
      check();
      return shared.increment(updates);
    }

    @Override
    public void decrement(List<CounterUpdate> updates) {
      check();
      shared.decrement(updates);
    }
  }

  /** A beat of one instance: when, on the fleet's clock. */
  private record Beat(int instance, long at) {}

  /**
   * Runs {@code n} instances through {@link #WINDOWS} windows, each beating once a window halfway
   * through it plus {@code jitter} (ms, below {@link #SPREAD}), while the store is cut off from the
   * instances in {@code reached} during {@code [from, until)}; checks after every beat from the end
   * of the second window on that each instance counts {@code n}, and returns the counts after every
   * beat.
   */
  private static List<List<Integer>> run(
      int n, Set<Integer> reached, long from, long until, List<Integer> jitter) {
    FakeClock clock = new FakeClock();
    long start = clock.millis();
    ReferenceCounterStore shared = new ReferenceCounterStore();
    List<FleetSize> fleet = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Cut store = new Cut(shared, clock, reached.contains(i), start + from, start + until);
      fleet.add(new FleetSize(store, clock, null));
    }
    List<List<Integer>> seen = new ArrayList<>();
    for (int w = 0; w < WINDOWS; w++) {
      List<Beat> beats = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        int j = jitter.get((w * n + i) % jitter.size());
        beats.add(new Beat(i, start + w * BEAT + BEAT / 2 + j));
      }
      beats.sort(Comparator.comparingLong(Beat::at));
      for (Beat b : beats) {
        clock.set(b.at());
        fleet.get(b.instance()).beat(b.at());
        if (w >= 2) {
          seen.add(fleet.stream().map(FleetSize::live).collect(Collectors.toList()));
        }
      }
    }
    return seen;
  }

  /**
   * The invariant: a fleet of {@code n} that has beaten through two windows counts itself {@code n}
   * at every instance after every beat, through any cut shorter than one beat minus the beats'
   * spread (so no instance misses two beats, and the instances that miss one miss the same
   * window's), reaching any of the instances. Never fewer: an instance counting fewer takes a
   * larger share while partitioned. Never more: each counts the beats of one window.
   */
  @Property(tries = 500)
  void aCutShorterThanOneBeatNeverChangesTheFleetsSize(
      @ForAll @IntRange(min = 2, max = 5) int n,
      @ForAll @LongRange(min = 2 * BEAT, max = 4 * BEAT) long from,
      @ForAll @LongRange(min = 1, max = BEAT - SPREAD) long length,
      @ForAll @IntRange(min = 1, max = 31) int reachedBits,
      @ForAll @Size(min = 1, max = 40) List<@IntRange(min = 0, max = SPREAD - 1) Integer> jitter) {
    Set<Integer> reached =
        IntStream.range(0, n)
            .filter(i -> (reachedBits & (1 << i)) != 0)
            .boxed()
            .collect(Collectors.toSet());
    List<Integer> all = IntStream.range(0, n).map(i -> n).boxed().collect(Collectors.toList());
    List<List<Integer>> seen = run(n, reached, from, from + length, jitter);
    for (List<Integer> counts : seen) {
      assertEquals(all, counts, "every instance's count after each beat: " + seen);
    }
  }

  /**
   * The break this pins: the store cut for 1 s around one heartbeat of three instances. The window
   * whose beats all failed counted 0, so at the next beat each instance counted only those that
   * beat before it (1, 2 and 3: shares of 30, 15 and 10 of a limit of 30 while partitioned).
   */
  @Test
  void aStoreCutAroundOneHeartbeatLeavesEveryInstanceCountingTheWholeFleet() {
    long beat = 3 * BEAT + BEAT / 2;
    List<List<Integer>> seen = run(3, Set.of(0, 1, 2), beat - 500, beat + 500, List.of(0, 1, 2));
    assertEquals(List.of(3, 3, 3), seen.get(seen.size() - 1), "after the cut: " + seen);
    for (List<Integer> counts : seen) {
      assertEquals(List.of(3, 3, 3), counts, "after each beat: " + seen);
    }
  }

  /** An instance whose beat alone failed is still counted by the others at the next beat. */
  @Test
  void anInstanceThatMissedOneBeatIsStillCountedByTheOthers() {
    long beat = 3 * BEAT + BEAT / 2;
    // Instance 0 beats first in every window; it alone is cut off around its beat of window 3.
    List<List<Integer>> seen = run(3, Set.of(0), beat - 10, beat + 10, List.of(0, 50, 60));
    for (List<Integer> counts : seen) {
      assertEquals(List.of(3, 3, 3), counts, "after each beat: " + seen);
    }
  }

  /** An instance that stopped drops out of the others' count within three beats. */
  @Test
  void anInstanceThatStoppedDropsOutWithinThreeBeats() {
    FakeClock clock = new FakeClock();
    ReferenceCounterStore shared = new ReferenceCounterStore();
    List<FleetSize> fleet = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      fleet.add(new FleetSize(shared, clock, null));
    }
    long start = clock.millis();
    for (int w = 0; w < 8; w++) {
      int alive = w < 3 ? 3 : 2;
      for (int i = 0; i < alive; i++) {
        fleet.get(i).beat(start + w * BEAT + BEAT / 2 + i);
      }
      if (w == 2) {
        assertEquals(3, fleet.get(0).live());
      }
      if (w == 5) {
        // Its last beat was in window 2: windows 3, 4 and 5 still count it (from 2 and 3's reads).
        assertEquals(2, fleet.get(0).live(), "three beats after it stopped");
        assertEquals(2, fleet.get(1).live(), "three beats after it stopped");
      }
    }
  }
}
