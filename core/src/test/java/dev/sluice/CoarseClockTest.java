package dev.sluice;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The default clock's thread: it never runs ahead, stops when unread, and starts again. */
class CoarseClockTest {

  @Test
  void neverRunsAheadOfTheSystemClockAndLagsLittle() {
    CoarseClock clock = new CoarseClock(1_000);
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
  void theThreadStopsWhenNobodyReadsAndStartsOnTheNextRead() throws InterruptedException {
    CoarseClock clock = new CoarseClock(5);
    assertFalse(clock.ticking(), "no thread before the first read");
    long first = clock.millis();
    assertTrue(clock.ticking());
    waitUntil(() -> !clock.ticking());
    long second = clock.millis();
    assertTrue(clock.ticking(), "a read starts it again");
    assertTrue(second >= first);
  }

  private static void waitUntil(java.util.function.BooleanSupplier condition)
      throws InterruptedException {
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (!condition.getAsBoolean()) {
      assertTrue(System.nanoTime() < deadline, "the clock's thread never stopped");
      Thread.sleep(5);
    }
  }
}
