package dev.sluice.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.OnStoreFailure;
import dev.sluice.Outcome;
import dev.sluice.Slots;
import dev.sluice.Sync;
import dev.sluice.spi.FakeClock;
import dev.sluice.spi.ReferenceCounterStore;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * An instance that shuts down ({@link RequestLimiter#close}) hands the store what it holds: its
 * requests' concurrency slots, its two-layer counts and its local admissions.
 */
class RequestLimiterCloseTest {

  private static final Duration PERIOD = Duration.ofHours(1);

  private static String id(String key) {
    return KeySource.parse("header:X-Api-Key").prefix() + key;
  }

  private static TestRequest request(String key) {
    return TestRequest.get("/api/v1/report").header("X-Api-Key", key);
  }

  private static RequestLimiter limiter(ReferenceCounterStore store, FakeClock clock, Rule rule) {
    return RequestLimiter.builder(store)
        .rules(RuleSet.builder().rule(rule).build())
        .clock(clock)
        .build();
  }

  private static Rule.Builder rule() {
    return Rule.builder("r").path("/api/**").key("header:X-Api-Key");
  }

  @Test
  void heldSlotsAreGivenBackAndAReleaseAfterwardsTakesNothingTwice() {
    FakeClock clock = new FakeClock();
    ReferenceCounterStore store = new ReferenceCounterStore();
    RequestLimiter l = limiter(store, clock, rule().concurrency(5, PERIOD).build());
    Outcome out = new Outcome();
    Slots[] held = new Slots[3];
    for (int i = 0; i < 3; i++) {
      assertTrue(l.decide(request("k"), out));
      held[i] = l.slots(out);
    }
    held[0].release();
    long window = clock.millis() / PERIOD.toMillis();
    assertEquals(2, store.count("r", id("k"), PERIOD.toMillis(), window));
    l.close();
    assertEquals(0, store.count("r", id("k"), PERIOD.toMillis(), window), "given back at close");
    assertTrue(l.decide(request("k"), out), "still deciding");
    held[1].release();
    assertEquals(
        1, store.count("r", id("k"), PERIOD.toMillis(), window), "a late release is no refund");
  }

  @Test
  void twoLayerCountsArePushed() {
    FakeClock clock = new FakeClock();
    ReferenceCounterStore store = new ReferenceCounterStore();
    RequestLimiter l =
        limiter(store, clock, rule().tier(100, PERIOD).sync(new Sync(PERIOD, 3)).build());
    Outcome out = new Outcome();
    for (int i = 0; i < 5; i++) {
      assertTrue(l.decide(request("k"), out));
    }
    l.close();
    long window = clock.millis() / PERIOD.toMillis();
    assertEquals(5, store.count("r", id("k"), PERIOD.toMillis(), window), "pushed at close");
  }

  @Test
  void localAdmissionsArePushed() {
    FakeClock clock = new FakeClock();
    ReferenceCounterStore store = new ReferenceCounterStore();
    RequestLimiter l =
        limiter(
            store,
            clock,
            rule()
                .algorithm(Algorithm.FIXED_WINDOW)
                .tier(30, PERIOD)
                .onStoreFailure(OnStoreFailure.LOCAL)
                .instances(3)
                .build());
    Outcome out = new Outcome();
    store.failWith(new IllegalStateException("store down"));
    for (int i = 0; i < 4; i++) {
      assertTrue(l.decide(request("k"), out));
    }
    store.failWith(null);
    l.close();
    long window = clock.millis() / PERIOD.toMillis();
    assertEquals(4, store.count("r", id("k"), PERIOD.toMillis(), window), "pushed at close");
  }
}
