package dev.sluice.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.OnStoreFailure;
import dev.sluice.Outcome;
import dev.sluice.Slots;
import dev.sluice.StoreStatus;
import dev.sluice.Sync;
import dev.sluice.Tier;
import dev.sluice.spi.FakeClock;
import dev.sluice.spi.ReferenceCounterStore;
import dev.sluice.spi.StoreTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/**
 * {@code onStoreFailure: local}. The guarantee: while the store fails, each instance admits at most
 * its share of each limit, {@code ceil(limit ÷ instances)} (a token bucket's burst and rate alike),
 * and exactly that when asked more; so a fleet of {@code instances} admits at most {@code instances
 * × ceil(limit ÷ instances)} per window. When the store answers again decisions are its own, and
 * what was admitted locally is added to its count with the next increment.
 */
class LocalOnStoreFailureTest {

  private static final Duration PERIOD = Duration.ofSeconds(10);

  private static Rule rule(Algorithm algorithm, long limit, int instances) {
    Rule.Builder b = Rule.builder("r").path("/api/**").key("header:X-Api-Key");
    if (algorithm == Algorithm.CONCURRENCY) {
      b.concurrency(limit, PERIOD);
    } else if (algorithm == Algorithm.TOKEN_BUCKET) {
      // A bucket of `limit` refilled at limit / 10 s: nothing refills while the clock stands.
      b.algorithm(algorithm).tier(new Tier(limit, PERIOD, limit));
    } else {
      b.algorithm(algorithm).tier(limit, PERIOD);
    }
    return b.onStoreFailure(OnStoreFailure.LOCAL).instances(instances).build();
  }

  private static RequestLimiter limiter(
      ReferenceCounterStore store, FakeClock clock, Rule... rules) {
    RuleSet.Builder b = RuleSet.builder();
    for (Rule r : rules) {
      b.rule(r);
    }
    return RequestLimiter.builder(store).rules(b.build()).clock(clock).build();
  }

  private static TestRequest request(String key) {
    return TestRequest.get("/api/v1/report").header("X-Api-Key", key);
  }

  /** The identity the rule's key source names for an API key. */
  private static String id(String key) {
    return KeySource.parse("header:X-Api-Key").prefix() + key;
  }

  private static long share(long limit, int instances) {
    return (limit + instances - 1) / instances;
  }

  @Property(tries = 300)
  void eachInstanceAdmitsExactlyItsShareWhileTheStoreFails(
      @ForAll Algorithm algorithm,
      @ForAll @IntRange(min = 1, max = 40) int limit,
      @ForAll @IntRange(min = 1, max = 5) int instances,
      @ForAll @IntRange(min = 1, max = 5) int live,
      @ForAll @IntRange(min = 0, max = 60) int requests) {
    FakeClock clock = new FakeClock();
    Rule rule = rule(algorithm, limit, instances);
    int running = Math.min(live, instances);
    List<RequestLimiter> fleet = new ArrayList<>();
    for (int i = 0; i < running; i++) {
      ReferenceCounterStore store = new ReferenceCounterStore();
      store.failWith(new IllegalStateException("store down"));
      fleet.add(limiter(store, clock, rule));
    }
    long[] admitted = new long[running];
    long[] sent = new long[running];
    Outcome out = new Outcome();
    for (int n = 0; n < requests; n++) {
      int i = n % running;
      sent[i]++;
      boolean allowed = fleet.get(i).decide(request("k"), out);
      assertEquals(StoreStatus.LOCAL, out.storeStatus(), "decided locally");
      if (allowed) {
        admitted[i]++;
      } else {
        assertEquals(429, RateLimitHeaders.status(out), "over its share is a 429, not a 503");
      }
    }
    long share = share(limit, instances);
    long total = 0;
    for (int i = 0; i < running; i++) {
      assertEquals(Math.min(sent[i], share), admitted[i], "instance " + i + ": its share exactly");
      total += admitted[i];
    }
    assertTrue(total <= instances * share, "the fleet's bound: " + total);
    assertTrue(total <= (long) running * share, "fewer instances admit less: " + total);
    if (algorithm == Algorithm.FIXED_WINDOW) {
      clock.advance(PERIOD);
      for (int i = 0; i < running; i++) {
        long next = 0;
        for (int n = 0; n < share + 1; n++) {
          next += fleet.get(i).decide(request("k"), out) ? 1 : 0;
        }
        assertEquals(share, next, "the next window admits the share again");
      }
    }
  }

  @Test
  void theStoreBackDecidesAgainWithWhatWasAdmittedLocallyAddedToItsCount() {
    FakeClock clock = new FakeClock();
    ReferenceCounterStore store = new ReferenceCounterStore();
    RequestLimiter l = limiter(store, clock, rule(Algorithm.FIXED_WINDOW, 6, 3));
    Outcome out = new Outcome();
    store.failWith(new IllegalStateException("store down"));
    assertTrue(l.decide(request("k"), out));
    assertTrue(l.decide(request("k"), out));
    assertFalse(l.decide(request("k"), out), "the share of 6 over 3 instances is 2");
    assertEquals(StoreStatus.LOCAL, out.storeStatus());
    store.failWith(null);
    int before = store.incrementCalls();
    for (int i = 0; i < 4; i++) {
      assertTrue(l.decide(request("k"), out), "the store's count holds the 2 local ones: " + i);
      assertEquals(StoreStatus.OK, out.storeStatus());
    }
    assertFalse(l.decide(request("k"), out), "the whole limit, local admissions included");
    long window = clock.millis() / PERIOD.toMillis();
    assertEquals(6, store.count("r", id("k"), PERIOD.toMillis(), window), "2 pushed, 4 counted");
    assertEquals(5, store.incrementCalls() - before, "the push rode on a decision's increment");
  }

  @Test
  void theNonBlockingPathAddsWhatWasAdmittedLocallyAsTheBlockingOneDoes() {
    FakeClock clock = new FakeClock();
    ReferenceCounterStore store = new ReferenceCounterStore();
    RequestLimiter l = limiter(store, clock, rule(Algorithm.FIXED_WINDOW, 6, 3));
    Outcome out = new Outcome();
    store.failWith(new IllegalStateException("store down"));
    assertTrue(decideAsync(l, out));
    assertTrue(decideAsync(l, out));
    assertFalse(decideAsync(l, out), "the share of 6 over 3 instances is 2");
    assertEquals(StoreStatus.LOCAL, out.storeStatus());
    store.failWith(null);
    for (int i = 0; i < 4; i++) {
      assertTrue(decideAsync(l, out), "the store's count holds the 2 local ones: " + i);
      assertEquals(StoreStatus.OK, out.storeStatus());
    }
    assertFalse(decideAsync(l, out), "the whole limit, local admissions included");
    long window = clock.millis() / PERIOD.toMillis();
    assertEquals(6, store.count("r", id("k"), PERIOD.toMillis(), window), "2 pushed, 4 counted");
  }

  private static boolean decideAsync(RequestLimiter l, Outcome out) {
    return l.decideAsync(request("k"), out).toCompletableFuture().join();
  }

  @Test
  void localHeadersDescribeTheShareAndTheRetryIsExact() {
    FakeClock clock = new FakeClock();
    ReferenceCounterStore store = new ReferenceCounterStore();
    store.failWith(new IllegalStateException("store down"));
    RequestLimiter l = limiter(store, clock, rule(Algorithm.FIXED_WINDOW, 10, 4));
    Outcome out = new Outcome();
    for (int i = 0; i < 3; i++) {
      assertTrue(l.decide(request("k"), out));
    }
    Map<String, String> headers = new LinkedHashMap<>();
    RateLimitHeaders.write(
        out,
        EnumSet.allOf(RateLimitHeaders.Family.class),
        RateLimitHeaders.ResetFormat.DELTA_SECONDS,
        clock.millis(),
        headers::put);
    assertEquals("3", headers.get("X-RateLimit-Limit"), "ceil(10 / 4)");
    assertEquals("0", headers.get("X-RateLimit-Remaining"));
    assertFalse(l.decide(request("k"), out));
    long toWindowEnd = PERIOD.toMillis() - clock.millis() % PERIOD.toMillis();
    assertEquals(toWindowEnd, out.retryAfterMillis(), "the local window's end");
  }

  @Test
  void aRuleThatRejectsDecidesFirstAndARuleThatAllowsIsNotCountedLocally() {
    FakeClock clock = new FakeClock();
    ReferenceCounterStore store = new ReferenceCounterStore();
    store.failWith(new IllegalStateException("store down"));
    Rule local = rule(Algorithm.SLIDING_WINDOW, 2, 1);
    Rule open = Rule.builder("open").path("/api/**").key("ip").tier(1, PERIOD).build();
    RequestLimiter mixed = limiter(store, clock, local, open);
    Outcome out = new Outcome();
    assertTrue(mixed.decide(request("k"), out));
    assertTrue(mixed.decide(request("k"), out), "the failing-open rule's limit of 1 is not kept");
    assertFalse(mixed.decide(request("k"), out), "the local rule's limit of 2 is");
    Rule.Builder closed = Rule.builder("closed").path("/api/**").key("ip").tier(100, PERIOD);
    RequestLimiter strict =
        limiter(store, clock, local, closed.onStoreFailure(OnStoreFailure.REJECT).build());
    assertFalse(strict.decide(request("k2"), out));
    assertEquals(StoreStatus.FAILED_CLOSED, out.storeStatus());
    assertEquals(503, RateLimitHeaders.status(out));
  }

  @Test
  void aTimeoutThatSucceedsLateIsDecidedLocallyAndItsSlotIsGivenBackToBoth() {
    FakeClock clock = new FakeClock();
    ReferenceCounterStore store = new ReferenceCounterStore();
    RequestLimiter l = limiter(store, clock, rule(Algorithm.CONCURRENCY, 4, 2));
    store.applyThenFail(new StoreTimeoutException("timed out"));
    Outcome out = new Outcome();
    assertTrue(l.decide(request("k"), out));
    assertEquals(StoreStatus.LOCAL, out.storeStatus());
    Slots first = l.slots(out);
    assertTrue(l.decide(request("k"), out));
    Slots second = l.slots(out);
    assertFalse(l.decide(request("k"), out), "two in flight, the share of 4 over 2");
    long window = clock.millis() / PERIOD.toMillis();
    assertEquals(
        2,
        store.count("r", id("k"), PERIOD.toMillis(), window),
        "the three late writes landed, and the refused one was given back");
    first.release();
    second.release();
    assertEquals(
        0, store.count("r", id("k"), PERIOD.toMillis(), window), "given back to the store");
    assertTrue(l.decide(request("k"), out), "and locally");
  }

  @Test
  void aBreakerThatRefusesBeforeSendingHoldsOnlyTheLocalSlot() {
    FakeClock clock = new FakeClock();
    ReferenceCounterStore store = new ReferenceCounterStore();
    RequestLimiter l = limiter(store, clock, rule(Algorithm.CONCURRENCY, 2, 1));
    Outcome out = new Outcome();
    assertTrue(l.decide(request("k"), out), "a slot taken in the store before the failure");
    store.failWith(new IllegalStateException("breaker open"));
    assertTrue(l.decide(request("k"), out));
    Slots held = l.slots(out);
    assertEquals(StoreStatus.LOCAL, out.storeStatus());
    store.failWith(null);
    held.release();
    long window = clock.millis() / PERIOD.toMillis();
    assertEquals(
        1,
        store.count("r", id("k"), PERIOD.toMillis(), window),
        "the local slot's release takes nothing from the store's count");
  }

  /**
   * A request let through because the store refused before sending anything (a breaker open) holds
   * no store slot: its release, after the store is back, would take back the slot of a request
   * still in flight.
   */
  @Test
  void aRequestTheStoreRefusedBeforeSendingGivesBackNoStoreSlot() {
    FakeClock clock = new FakeClock();
    ReferenceCounterStore store = new ReferenceCounterStore();
    Rule one =
        Rule.builder("r")
            .path("/api/**")
            .key("header:X-Api-Key")
            .concurrency(1, PERIOD)
            .onStoreFailure(OnStoreFailure.ALLOW)
            .build();
    RequestLimiter l = limiter(store, clock, one);
    Outcome out = new Outcome();
    assertTrue(l.decide(request("k"), out), "a request in flight, its slot in the store");
    store.failWith(new IllegalStateException("breaker open"));
    assertTrue(l.decide(request("k"), out), "let through, failing open");
    Slots held = l.slots(out);
    store.failWith(null);
    held.release();
    long window = clock.millis() / PERIOD.toMillis();
    assertEquals(
        1,
        store.count("r", id("k"), PERIOD.toMillis(), window),
        "the slot of the request in flight is still counted");
    assertFalse(l.decide(request("k"), out), "and a second request is refused");
  }

  @Test
  void theSlotOfARuleThatAllowsIsGivenBackWhenItsIncrementMayLandLate() {
    FakeClock clock = new FakeClock();
    ReferenceCounterStore store = new ReferenceCounterStore();
    Rule inFlight =
        Rule.builder("in-flight").path("/api/**").key("ip").concurrency(100, PERIOD).build();
    RequestLimiter l = limiter(store, clock, rule(Algorithm.FIXED_WINDOW, 10, 1), inFlight);
    store.applyThenFail(new StoreTimeoutException("timed out"));
    Outcome out = new Outcome();
    assertTrue(l.decide(request("k"), out));
    assertEquals(StoreStatus.LOCAL, out.storeStatus());
    long window = clock.millis() / PERIOD.toMillis();
    assertEquals(
        0,
        store.count(
            "in-flight", KeySource.parse("ip").prefix() + "192.0.2.1", PERIOD.toMillis(), window),
        "the late slot of the rule left out is given back at once (no release will come)");
  }

  @Test
  void twoLayerCountingTakesNoLocalSetting() {
    Rule.Builder b =
        Rule.builder("r")
            .tier(10, PERIOD)
            .sync(new Sync(Duration.ofMillis(200), 3))
            .onStoreFailure(OnStoreFailure.LOCAL);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, b::build);
    assertTrue(e.getMessage().contains("already limits locally"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> Rule.builder("r").instances(0));
  }
}
