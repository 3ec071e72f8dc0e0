package dev.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.control.Governor;
import dev.sluice.control.Knobs;
import dev.sluice.control.Throttle;
import dev.sluice.control.Throttles;
import dev.sluice.spi.FakeClock;
import dev.sluice.spi.SharedValues;
import dev.sluice.store.memcached.MemcachedCounterStore;
import dev.sluice.testkit.Memcached;
import dev.sluice.testkit.MemcachedServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Throttles and a governor's lease shared by two instances through one real memcached. */
@Memcached
class ThrottleFleetIT {

  private static MemcachedServer memcached;
  private static final List<MemcachedCounterStore> stores = new ArrayList<>();

  @BeforeAll
  static void start(MemcachedServer started) {
    memcached = started;
  }

  @AfterAll
  static void stop() {
    stores.forEach(MemcachedCounterStore::close);
  }

  private static MemcachedCounterStore store(String prefix) {
    MemcachedCounterStore s =
        MemcachedCounterStore.builder()
            .servers(memcached.address())
            .prefix(prefix)
            .operationTimeout(Duration.ofSeconds(1))
            .build();
    stores.add(s);
    return s;
  }

  @Test
  void twoInstancesShareOneCalendarsThreePerFiveSecondsAndOneRateKnob() {
    FakeClock clock = new FakeClock(System.currentTimeMillis() / 5_000 * 5_000);
    MemcachedCounterStore a = store("thr");
    MemcachedCounterStore b = store("thr");
    Throttles ta = Throttles.builder(a).clock(clock).build();
    Throttles tb = Throttles.builder(b).clock(clock).build();
    List<Boolean> answers = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      answers.add((i % 2 == 0 ? ta : tb).throttle("gcal", 0.5).tryAcquire("cal-1").allowed());
    }
    assertEquals(List.of(true, true, true, false, false, false), answers, "3 per 5 s, fleet-wide");
    clock.advance(Duration.ofSeconds(5));
    assertTrue(tb.throttle("gcal", 0.5).tryAcquire("cal-1").allowed(), "the next window refills");

    // One knob, written once, read by both instances.
    SharedValues values = a.sharedValues().orElseThrow();
    Knobs.change(values, k -> k.with("throttle:email", "rate", "0"));
    Knobs seen =
        Knobs.parse(b.sharedValues().orElseThrow().get(Knobs.VALUE_NAME).orElseThrow().value());
    ta.applyKnobs(seen);
    tb.applyKnobs(seen);
    Throttle.Permit stopped = tb.throttle("email", 10).tryAcquire();
    assertFalse(stopped.allowed(), "rate=0 stops the throttle on the other instance too");
  }

  @Test
  void aGovernorsLeaseMovesToAnotherInstanceWhenItsHolderStops() throws Exception {
    SharedValues va = store("gov").sharedValues().orElseThrow();
    SharedValues vb = store("gov").sharedValues().orElseThrow();
    Governor a = governor(va, "a");
    Governor b = governor(vb, "b");
    a.tick();
    b.tick();
    assertTrue(a.state().leader());
    assertFalse(b.state().leader(), "one steers at a time");
    // a stops ticking (dies). Its lease lives 3 intervals (3 s); b takes over soon after.
    long t0 = System.nanoTime();
    while (!b.state().leader() && System.nanoTime() - t0 < 20_000_000_000L) {
      Thread.sleep(250);
      b.tick();
    }
    assertTrue(b.state().leader(), "b took over");
    double seconds = (System.nanoTime() - t0) / 1e9;
    assertTrue(seconds >= 1.5, "not before a's lease expired: " + seconds + " s");
  }

  private static Governor governor(SharedValues values, String owner) {
    return Governor.builder(values, "reindex")
        .signal(() -> 1)
        .setpoint(2)
        .gains(24, 0.8, 0)
        .maxRate(300)
        .interval(Duration.ofSeconds(1))
        .owner(owner)
        .build();
  }
}
