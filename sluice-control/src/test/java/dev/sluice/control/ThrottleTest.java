package dev.sluice.control;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.spi.FakeClock;
import dev.sluice.spi.ReferenceCounterStore;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class ThrottleTest {

  /** A whole number of 5 s windows since the epoch: each test starts at a window's start. */
  private static final long START = 1_700_000_000_000L;

  private final FakeClock clock = new FakeClock(START);
  private final ReferenceCounterStore store = new ReferenceCounterStore();

  private Throttles throttles() {
    Throttles.Builder b = Throttles.builder(store).clock(clock);
    b.sleeper = d -> clock.advance(d);
    return b.build();
  }

  @Test
  void theCalendarExampleLetsThreeNotificationsThroughPerFiveSecondsPerCalendar() {
    Throttle gcal = throttles().throttle("gcal", 0.5);
    for (int window = 0; window < 4; window++) {
      for (int i = 0; i < 3; i++) {
        Throttle.Permit p = gcal.tryAcquire("calendar-1");
        assertTrue(p.allowed(), "window " + window + ", notification " + (i + 1));
        assertEquals(2 - i, p.tokens());
        assertEquals(Duration.ZERO, p.sleep());
      }
      clock.advanceMillis(1_200);
      Throttle.Permit fourth = gcal.tryAcquire("calendar-1");
      assertFalse(fourth.allowed(), "the fourth in a window is refused");
      assertEquals(0, fourth.tokens());
      assertEquals(Duration.ofMillis(3_800), fourth.sleep(), "until the next window begins");
      assertTrue(gcal.tryAcquire("calendar-2").allowed(), "each calendar has its own pace");
      clock.advance(fourth.sleep());
    }
  }

  @Test
  void aBurstGoesAtOnceAndThenThePaceSettlesToTheRate() {
    Throttle t = throttles().throttle("reindex", 1, 3, Duration.ofSeconds(5));
    for (int i = 0; i < 15; i++) {
      assertTrue(t.tryAcquire().allowed(), "burst: ceil(1 x 3 x 5) = 15 at once, #" + (i + 1));
    }
    assertFalse(t.tryAcquire().allowed());
    int allowed = 15;
    // Ask every 100 ms for 5 minutes: the long-run pace must be the rate.
    for (int step = 1; step <= 3_000; step++) {
      clock.advanceMillis(100);
      if (t.tryAcquire().allowed()) {
        allowed++;
      }
    }
    assertTrue(allowed >= 300 - 15 && allowed <= 300 + 15, "about 1/s over 300 s: " + allowed);
  }

  @Test
  void rateZeroRefusesWithAWholeWindowSleepAndMinusOneLetsAllThrough() {
    Throttles th = throttles();
    Throttle.Permit stopped = th.throttle("stopped", 0).tryAcquire();
    assertFalse(stopped.allowed());
    assertEquals(Duration.ofSeconds(5), stopped.sleep());
    Throttle open = th.throttle("open", -1);
    for (int i = 0; i < 1_000; i++) {
      assertTrue(open.tryAcquire().allowed());
    }
    assertEquals(0, store.incrementCalls(), "neither asks the store");
  }

  @Test
  void knobsOverrideRateAndBurstAtRuntime() {
    Throttles th = throttles();
    Throttle t = th.throttle("email", 0.5);
    th.applyKnobs(Knobs.NONE.with("throttle:email", "rate", "2"));
    assertEquals(2.0, t.rate());
    for (int i = 0; i < 10; i++) {
      assertTrue(t.tryAcquire().allowed(), "2/s over 5 s: 10, #" + (i + 1));
    }
    assertFalse(t.tryAcquire().allowed());
    th.applyKnobs(Knobs.NONE.with("throttle:email", "rate", "0"));
    assertFalse(t.tryAcquire().allowed(), "rate=0 stops it");
    th.applyKnobs(Knobs.NONE);
    assertEquals(0.5, t.rate(), "without the knob, the code's rate is back");
    th.applyKnobs(Knobs.NONE.with("throttle:email", "burst", "2"));
    assertEquals(2.0, t.burst());
    Throttle later = th.throttle("email", 0.5);
    assertSame(t, later);
    assertEquals(2.0, later.burst(), "a knob also covers a throttle asked for after it arrived");
  }

  @Test
  void workloadsShareAThrottleByNameAndConflictingSettingsAreRefused() {
    Throttles th = throttles();
    Throttle a = th.throttle("tier-2", 1);
    Throttle b = th.throttle("tier-2", 1);
    assertSame(a, b);
    for (int i = 0; i < 5; i++) {
      assertTrue((i % 2 == 0 ? a : b).tryAcquire().allowed());
    }
    assertFalse(b.tryAcquire().allowed(), "both workloads drew on one pace of 5 per 5 s");
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> th.throttle("tier-2", 2));
    assertTrue(e.getMessage().contains("already exists"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> th.throttle("bad name", 1));
    assertThrows(IllegalArgumentException.class, () -> th.throttle("x", -2));
    assertThrows(
        IllegalArgumentException.class, () -> th.throttle("y", 1, 0.5, Duration.ofSeconds(1)));
  }

  @Test
  void acquireSleepsExactlyAsLongAsEachRefusalSays() throws InterruptedException {
    Throttle t = throttles().throttle("jobs", 0.5);
    for (int i = 0; i < 7; i++) {
      t.acquire();
    }
    assertEquals(
        START + 10_000, clock.millis(), "3 in the first window, 3 in the second, 1 in the third");
  }

  @Test
  void anInterruptedAcquireTakesNoPermit() {
    Throttles.Builder b = Throttles.builder(store).clock(clock);
    b.sleeper =
        d -> {
          throw new InterruptedException();
        };
    Throttle t = b.build().throttle("jobs", 0.5);
    for (int i = 0; i < 3; i++) {
      assertTrue(t.tryAcquire().allowed());
    }
    assertThrows(InterruptedException.class, t::acquire);
    assertEquals(
        3, store.count("throttle:jobs", "", 5_000, START / 5_000), "the refused ask took nothing");
  }

  @Test
  void aStoreFailureMakesWorkWaitByDefault() {
    Throttle closed = throttles().throttle("a", 1);
    store.failWith(new IllegalStateException("down"));
    Throttle.Permit p = closed.tryAcquire();
    assertFalse(p.allowed());
    assertEquals(Duration.ofSeconds(1), p.sleep());
    Throttle open =
        Throttles.builder(store).clock(clock).failClosed(false).build().throttle("b", 1);
    assertTrue(open.tryAcquire().allowed());
  }
}
