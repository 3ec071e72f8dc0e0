package dev.sluice.store.memcached;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.spi.StoreClock;
import dev.sluice.testkit.Memcached;
import dev.sluice.testkit.MemcachedServer;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Memcached's clock measured by instances whose hosts' clocks disagree by up to a minute and a
 * half: each instance's host clock plus its measured offset is one time, to within the
 * measurements' stated errors, whatever its skew.
 */
@Memcached
class MemcachedClockTest {

  private static MemcachedServer server;

  @BeforeAll
  static void start(MemcachedServer started) {
    server = started;
  }

  /** The system clock, {@code skewMillis} off. */
  record Skewed(long skewMillis) implements InstantSource {
    @Override
    public Instant instant() {
      return Instant.ofEpochMilli(millis());
    }

    @Override
    public long millis() {
      return System.currentTimeMillis() + skewMillis;
    }
  }

  @Test
  void instancesWhoseClocksDisagreeMeasureOneTime() throws Exception {
    long[] skews = {0, 30_000, -60_000, 90_000};
    List<MemcachedCounterStore> stores = new ArrayList<>();
    try {
      for (long skew : skews) {
        stores.add(
            MemcachedCounterStore.builder()
                .servers(server.address())
                .clock(new Skewed(skew))
                .clockAlignSeconds(3)
                // Each instance of a fleet runs in its own JVM, with its own scheduler.
                .scheduler(Executors.newSingleThreadScheduledExecutor())
                .build());
      }
      // Every instance measures the tick into each third second: wait (a condition with a deadline,
      // the measurements run in the background) until all four last measured the same one.
      long deadline = System.nanoTime() + 20_000_000_000L;
      while (!sameAlignedTick(stores) && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      assertTrue(sameAlignedTick(stores), "no common aligned measurement in 20 s");
      StoreClock first = stores.get(0).clock().orElseThrow();
      // Memcached runs on this host: its clock is its host's, to within its own second.
      assertTrue(Math.abs(first.offsetMillis()) <= 2_500, "offset " + first);
      StringBuilder report = new StringBuilder();
      for (int i = 0; i < skews.length; i++) {
        StoreClock c = stores.get(i).clock().orElseThrow();
        // Host time + offset: (true + skew) + offset. Against the first instance's (skew 0):
        long disagreement = skews[i] + c.offsetMillis() - first.offsetMillis();
        report.append(String.format("skew %+d ms: %s%n", skews[i], c));
        assertTrue(
            Math.abs(disagreement) <= c.errorMillis() + first.errorMillis() + 5,
            "instance " + i + " disagrees by " + disagreement + " ms\n" + report);
        assertTrue(c.errorMillis() <= 50, "a measurement this loose helps no one: " + c);
      }
      System.out.print(report);
    } finally {
      stores.forEach(MemcachedCounterStore::close);
    }
  }

  /**
   * A memcached started again ticks at a phase of its own: the clock finds the new process within
   * seconds and measures it, rather than keep the old phase until its next aligned measurement
   * (here an hour away), which would leave a fleet whose instance restarted after memcached
   * deciding on two clocks.
   */
  @Test
  void aMemcachedStartedAgainIsMeasuredAgainWithinSeconds() throws Exception {
    assertMeasuredAgainAfter(
        "started again",
        (m, k) -> {
          // The new phase follows the instant of the restart: start it at another point of a
          // second.
          Thread.sleep(300 + 370L * k % 1000);
          m.restart();
        },
        8_000);
  }

  /**
   * A memcached frozen (SIGSTOP) and thawed runs its timer late, and every tick after it: the clock
   * sees the tick come where it did not expect it and measures it again within seconds, rather than
   * keep the old phase until its next aligned measurement (here an hour away), which would leave a
   * fleet deciding on two clocks once an instance starts after the stall.
   */
  @Test
  void aStalledMemcachedIsMeasuredAgainWithinSeconds() throws Exception {
    assertMeasuredAgainAfter(
        "stalled",
        (m, k) -> {
          // The thaw's instant sets the new phase.
          m.stall();
          Thread.sleep(1_100 + 370L * k % 1000);
          m.resume();
        },
        5_000);
  }

  /**
   * A memcached frozen again while its moved tick is being measured, across the tick the clock
   * waits for: a read held up by the stall answers at the thaw, when the second jumps, and a tick
   * placed anywhere in that read's span would be up to half the stall off. The clock passes such a
   * reading over and places the next tick within a poll: every moved offset it records has an error
   * of a poll or so (here at most 60 ms, for a scheduler that runs a step late on a loaded
   * machine), not about half of the 300 ms stall.
   */
  @Test
  void aStallDuringTheMeasurementOfAMovedTickIsNotTakenForItsTick() throws Exception {
    try (MemcachedServer m = MemcachedServer.start();
        MemcachedCounterStore store = hourly(m)) {
      MemcachedClock c = (MemcachedClock) store.clock().orElseThrow();
      assertTrue(
          MemcachedServer.await(Duration.ofSeconds(10), () -> c.errorMillis() >= 0),
          "never measured: " + c);
      List<String> measured = new ArrayList<>();
      for (int k = 0; k < 8 && measured.size() < 4; k++) {
        m.stall();
        Thread.sleep(1_100 + 370L * k % 1000);
        long thawed = System.currentTimeMillis();
        m.resume();
        // Thawed, memcached ticks a whole number of seconds after the thaw. The move is seen at
        // the next expected tick and measured at the one after: freeze it again across that one.
        if (!MemcachedServer.await(Duration.ofSeconds(3), c::measuringMove)) {
          continue; // a move too small to see: stall again
        }
        long seen = System.currentTimeMillis();
        long tick = thawed + (seen - thawed + 1_000) / 1_000 * 1_000;
        Thread.sleep(Math.max(0, tick - 150 - System.currentTimeMillis()));
        m.stall();
        Thread.sleep(300);
        // Frozen, memcached cannot have let the measurement finish: unless it finished before the
        // stall began, a read is held up now (it waits up to the probe's 500 ms, not a timeout).
        boolean heldUp = c.measuringMove();
        m.resume();
        assertTrue(
            MemcachedServer.await(Duration.ofSeconds(10), () -> !c.measuringMove()),
            "not measured: " + c);
        if (!heldUp) {
          continue;
        }
        measured.add(c.offsetMillis() + " ±" + c.errorMillis());
        assertTrue(c.errorMillis() <= 60, "a moved tick placed within " + measured);
      }
      assertTrue(measured.size() >= 2, "moves measured: " + measured);
      System.out.println("moved ticks, each measured across a stall: " + measured);
    }
  }

  /**
   * A store on {@code m} whose clock measures the aligned tick once an hour, on a scheduler of its
   * own: between, only a moved tick is measured.
   */
  private static MemcachedCounterStore hourly(MemcachedServer m) {
    return MemcachedCounterStore.builder()
        .servers(m.address())
        .clockAlignSeconds(3_600)
        .scheduler(Executors.newSingleThreadScheduledExecutor())
        .build();
  }

  /** Something done to a memcached, the {@code k}th time, that may move its tick. */
  private interface Disturbance {
    void apply(MemcachedServer m, int k) throws Exception;
  }

  /**
   * Measures a new memcached's clock, disturbs it until its tick is clearly elsewhere (at least 200
   * ms from where it was, at most ten times), and asserts that the clock has the new tick within
   * {@code withinMillis}.
   */
  private static void assertMeasuredAgainAfter(String what, Disturbance disturb, long withinMillis)
      throws Exception {
    try (MemcachedServer m = MemcachedServer.start();
        MemcachedCounterStore store = hourly(m)) {
      StoreClock c = store.clock().orElseThrow();
      assertTrue(
          MemcachedServer.await(Duration.ofSeconds(10), () -> c.errorMillis() >= 0),
          "never measured: " + c);
      long old = c.offsetMillis();
      long phase = old;
      for (int k = 0; k < 10 && Math.abs(phase - old) < 200; k++) {
        disturb.apply(m, k);
        phase = tick(m);
      }
      assertTrue(Math.abs(phase - old) >= 200, "ten times " + what + " kept the phase: " + phase);
      long measured = phase;
      assertTrue(
          MemcachedServer.await(
              Duration.ofMillis(withinMillis),
              () -> Math.abs(c.offsetMillis() - measured) <= c.errorMillis() + 30),
          "memcached "
              + what
              + " now ticks at "
              + measured
              + " ms from this host, was "
              + old
              + ": "
              + c);
      System.out.printf(
          "memcached %s: its tick moved from %d to %d ms, measured: %s%n", what, old, measured, c);
    }
  }

  /** Memcached's clock minus this host's, in ms, measured at a tick of its second. */
  private static long tick(MemcachedServer m) {
    long second = m.stat("time");
    long before = System.currentTimeMillis();
    long deadline = before + 3_000;
    while (System.currentTimeMillis() < deadline) {
      long now = m.stat("time");
      long after = System.currentTimeMillis();
      if (now != second) {
        return now * 1000 - (before + after) / 2;
      }
      before = after;
    }
    throw new AssertionError("memcached's clock did not tick");
  }

  private static boolean sameAlignedTick(List<MemcachedCounterStore> stores) {
    long second = -2;
    for (MemcachedCounterStore s : stores) {
      long t = ((MemcachedClock) s.clock().orElseThrow()).alignedSecond();
      if (t < 0 || (second != -2 && t != second)) {
        return false;
      }
      second = t;
    }
    return true;
  }

  @Test
  void turnedOffTheStoreOffersNoClock() {
    try (MemcachedCounterStore s =
        MemcachedCounterStore.builder().servers(server.address()).storeClock(false).build()) {
      assertTrue(s.clock().isEmpty());
    }
  }
}
