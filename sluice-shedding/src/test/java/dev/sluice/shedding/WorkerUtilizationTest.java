package dev.sluice.shedding;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.spi.FakeClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/**
 * The worker shedder's utilization is the share of worker time busy since its last sample, however
 * the requests line up: a server whose workers all start and finish together is as full as one
 * whose requests are spread out.
 */
class WorkerUtilizationTest {

  private static final Duration DELAY = Duration.ofSeconds(2);
  private static final Duration RAMP = Duration.ofSeconds(10);

  /** Priorities the saturating clients send in turn: the three sheddable ranks, then critical. */
  private static final int[] RANKS = {1, 2, 3, 0};

  /**
   * {@code workers} workers, each always busy: they finish a request together every {@code
   * requestMillis} and each takes the next from the queue at once, its own decision first (a shed
   * request frees its worker for the next). Every draw is 0, so a request is shed as soon as its
   * class's chance is above 0. Returns the first shed's time (ms, -1 for none) and the amount after
   * {@code seconds}.
   */
  private static double[] saturate(int workers, int requestMillis, int offsetMillis, int seconds) {
    FakeClock clock = new FakeClock();
    clock.advance(Duration.ofMillis(offsetMillis));
    LoadShedder shedder =
        LoadShedder.builder()
            .workers(workers)
            .delay(DELAY)
            .ramp(RAMP)
            .clock(clock)
            .random(() -> 0.0)
            .build();
    long start = clock.millis();
    long firstShed = -1;
    List<Runnable> running = new ArrayList<>();
    int next = 0;
    while (clock.millis() - start < seconds * 1000L) {
      running.forEach(Runnable::run);
      running.clear();
      for (int w = 0; w < workers; w++) {
        while (true) {
          int rank = RANKS[next++ % RANKS.length];
          Runnable exit = shedder.enter();
          if (!shedder.sheds(rank, 3)) {
            running.add(exit);
            break;
          }
          exit.run();
          if (firstShed < 0) {
            firstShed = clock.millis() - start;
          }
        }
      }
      clock.advance(Duration.ofMillis(requestMillis));
    }
    return new double[] {firstShed, shedder.amount()};
  }

  @Property(tries = 200)
  void workersBusyInStepAreFullOverload(
      @ForAll @IntRange(min = 2, max = 64) int workers,
      @ForAll @IntRange(min = 20, max = 900) int requestMillis,
      @ForAll @IntRange(min = 0, max = 999) int offsetMillis) {
    // Full overload from the start: the amount rises from -delay/ramp at 1/ramp a second, so it
    // reaches 0 after the delay and 1 (everything sheddable shed) after delay + ramp.
    double[] r = saturate(workers, requestMillis, offsetMillis, 15);
    assertTrue(r[0] >= DELAY.toMillis(), "nothing is shed before the delay: " + r[0]);
    assertTrue(
        r[0] <= DELAY.toMillis() + 1_000 + 2L * requestMillis,
        "the lowest class is shed within a second of the delay: " + r[0]);
    assertEquals(1.0, r[1], 1e-9, "after delay + ramp every sheddable request is shed");
  }

  @Test
  void halfTheWorkersBusyIsBelowTheDeadZone() {
    FakeClock clock = new FakeClock();
    LoadShedder shedder =
        LoadShedder.builder().workers(4).delay(DELAY).ramp(RAMP).clock(clock).build();
    double rest = shedder.amount();
    for (int s = 0; s < 30; s++) {
      // Four requests at once for half of each second, none for the other half.
      List<Runnable> running = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        running.add(shedder.enter());
      }
      clock.advance(Duration.ofMillis(500));
      running.forEach(Runnable::run);
      clock.advance(Duration.ofMillis(500));
      shedder.amount();
    }
    assertEquals(rest, shedder.amount(), 1e-9, "a 50 % busy server never sheds");
    assertEquals(0, shedder.inFlight());
  }

  @Test
  void aClockThatStepsBackKeepsTheBusyTimeCounting() {
    FakeClock clock = new FakeClock();
    LoadShedder shedder =
        LoadShedder.builder().workers(2).delay(Duration.ZERO).ramp(RAMP).clock(clock).build();
    Runnable a = shedder.enter();
    Runnable b = shedder.enter();
    for (int s = 0; s < 5; s++) {
      clock.advance(Duration.ofSeconds(1));
      shedder.amount();
    }
    // The first sample starts the controller's clock: 4 s of a 10 s ramp.
    assertEquals(0.4, shedder.amount(), 1e-9, "both workers busy");
    clock.set(clock.millis() - Duration.ofHours(1).toMillis());
    for (int s = 0; s < 3; s++) {
      clock.advance(Duration.ofSeconds(1));
      shedder.amount();
    }
    // The step itself moves nothing; the seconds after it count at full utilization again.
    assertEquals(0.6, shedder.amount(), 1e-9, "still rising after the step");
    a.run();
    b.run();
    assertEquals(0, shedder.inFlight());
  }
}
