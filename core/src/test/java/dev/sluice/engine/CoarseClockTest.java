package dev.sluice.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The default clock: it never runs ahead, stops ticking when unread, and starts again. */
class CoarseClockTest {

  @Test
  void neverRunsAheadOfTheSystemClockAndLagsLittle() {
    CoarseClock clock = CoarseClock.shared();
    long maxLag = 0;
    for (int i = 0; i < 200_000; i++) {
      long before = System.currentTimeMillis();
      long read = clock.millis();
      long after = System.currentTimeMillis();
      assertTrue(read <= after, "ahead of the system clock: " + read + " > " + after);
      maxLag = Math.max(maxLag, before - read);
    }
    // A bound far above the millisecond it lags by, so that a loaded machine does not fail it.
    assertTrue(maxLag < 2_000, "lagged by " + maxLag + " ms");
  }

  @Test
  void tickingStopsAfterIdleTicksWithoutAReadAndTheNextReadStartsIt() {
    List<Runnable> started = new ArrayList<>();
    CoarseClock clock = new CoarseClock(3, started::add);
    assertFalse(clock.ticking(), "nothing ticks before the first read");
    long first = clock.millis();
    assertTrue(clock.ticking());
    assertEquals(1, started.size(), "the first read starts the ticking");
    assertTrue(clock.tick(), "read since the start");
    for (int i = 0; i < 5; i++) {
      long read = clock.millis();
      assertTrue(read >= first);
      assertTrue(clock.tick(), "a reader between ticks keeps it ticking");
    }
    assertTrue(clock.tick(), "one tick without a read");
    assertTrue(clock.tick(), "two");
    assertFalse(clock.tick(), "the third stops it");
    assertFalse(clock.ticking());
    assertTrue(clock.millis() >= first, "a read while stopped reads the system clock");
    assertTrue(clock.ticking());
    assertEquals(2, started.size(), "and starts the ticking again");
  }
}
