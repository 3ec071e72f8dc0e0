package dev.sluice.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.DecisionListener;
import dev.sluice.OnStoreFailure;
import dev.sluice.spi.FakeClock;
import dev.sluice.spi.RecordingStore;
import dev.sluice.spi.ReferenceCounterStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class RequestLimiterTest {

  private final FakeClock clock = new FakeClock();
  private final ReferenceCounterStore store = new ReferenceCounterStore();

  private static final Rule PER_KEY =
      Rule.builder("per-key")
          .path("/api/**")
          .key("header:X-Api-Key")
          .algorithm(Algorithm.FIXED_WINDOW)
          .tier(2, Duration.ofMinutes(1))
          .build();
  private static final Rule CUSTOMER =
      Rule.builder("customer")
          .path("/api/**")
          .key("header:X-Customer-Id")
          .algorithm(Algorithm.FIXED_WINDOW)
          .tier(3, Duration.ofMinutes(1))
          .build();

  private RequestLimiter limiter(Rule... rules) {
    RuleSet.Builder b = RuleSet.builder().trustedProxies(List.of("10.0.0.0/8"));
    for (Rule r : rules) {
      b.rule(r);
    }
    return RequestLimiter.builder(store).rules(b.build()).clock(clock).build();
  }

  /**
   * A request reads the system clock: the coarse clock's thread, waking every millisecond, would
   * cost a server more than the readings it saves.
   */
  @Test
  void requestsReadTheSystemClockByDefault() {
    RequestLimiter l =
        RequestLimiter.builder(store).rules(RuleSet.builder().rule(PER_KEY).build()).build();
    assertEquals(java.time.InstantSource.system(), l.clock());
  }

  private static TestRequest call(String key, String customer) {
    return TestRequest.get("/api/v1/report")
        .header("X-Api-Key", key)
        .header("X-Customer-Id", customer);
  }

  @Test
  void slotsNeverGivenBackExpireWithinTwoSlotTtls() {
    Rule inFlight =
        Rule.builder("in-flight")
            .path("/api/**")
            .key("header:X-Api-Key")
            .concurrency(2, Duration.ofSeconds(30))
            .build();
    RequestLimiter l = limiter(inFlight);
    dev.sluice.Outcome out = new dev.sluice.Outcome();
    for (int i = 0; i < 2; i++) {
      assertTrue(l.decide(call("k1", "c"), out));
      assertTrue(l.slots(out).holds(), "an allowed request holds a slot");
    }
    assertFalse(l.decide(call("k1", "c"), out), "the third in flight is refused");
    assertEquals(dev.sluice.Algorithm.CONCURRENCY, out.algorithm());
    assertEquals(1_000, out.retryAfterMillis());
    assertFalse(l.slots(out).holds(), "a refused request holds nothing");
    // The two holders died without giving their slots back: they are gone within 2 x 30 s.
    clock.advance(Duration.ofSeconds(60));
    assertTrue(l.decide(call("k1", "c"), out));
    dev.sluice.Slots held = l.slots(out);
    assertTrue(l.decide(call("k1", "c"), out));
    held.release();
    held.release();
    assertTrue(l.decide(call("k1", "c"), out), "a release frees one slot, however often called");
    assertFalse(l.decide(call("k1", "c"), out));
  }

  @Test
  void aConcurrencyRuleHasOneLimitAndNoSync() {
    assertThrows(
        IllegalArgumentException.class,
        () ->
            Rule.builder("x")
                .concurrency(2, Duration.ofSeconds(30))
                .sync(new dev.sluice.Sync(Duration.ofMillis(200), 2))
                .build());
  }

  @Test
  void knobsTuneTheRulesWithoutTouchingThemAndOutliveAnUpdate() {
    RequestLimiter l = limiter(CUSTOMER);
    l.applyKnobs(dev.sluice.control.Knobs.NONE.with("rule:customer", "limit", "1"));
    Decision first = l.decide(call("k1", "acme")).orElseThrow();
    assertTrue(first.allowed());
    assertEquals(1, first.limit(), "the knob's limit is advertised");
    assertFalse(l.decide(call("k1", "acme")).orElseThrow().allowed(), "and enforced");

    l.update(RuleSet.builder().rule(CUSTOMER).build());
    assertFalse(l.decide(call("k1", "acme")).orElseThrow().allowed(), "a reload keeps the knob");

    l.applyKnobs(dev.sluice.control.Knobs.NONE.with("rule:customer", "shadow", "true"));
    assertTrue(l.decide(call("k1", "acme")).orElseThrow().allowed(), "shadow: count, never reject");

    l.applyKnobs(dev.sluice.control.Knobs.NONE.with("rule:customer", "enabled", "false"));
    assertTrue(l.decide(call("k1", "acme")).isEmpty(), "a rule turned off applies to nothing");

    l.applyKnobs(
        dev.sluice.control.Knobs.NONE
            .with("global", "enabled", "false")
            .with("rule:other", "limit", "4"));
    assertTrue(l.decide(call("k1", "acme")).isEmpty(), "the fleet-wide kill switch");

    l.applyKnobs(dev.sluice.control.Knobs.NONE);
    Decision back = l.decide(call("k9", "globex")).orElseThrow();
    assertEquals(3, back.limit(), "without knobs, the rule's own limit");
  }

  @Test
  void aLimiterReadsTheFleetsKnobsFromItsStore() {
    // The watcher RequestLimiter.Builder.knobs starts, refreshed by hand instead of by a timer
    // (it/KnobsFleetIT runs the timed one across two instances).
    RequestLimiter l = limiter(CUSTOMER);
    try (dev.sluice.control.KnobWatcher watcher =
        dev.sluice.control.KnobWatcher.manual(store.sharedValues().orElseThrow())) {
      watcher.listen(l::applyKnobs);
      dev.sluice.control.Knobs.change(
          store.sharedValues().orElseThrow(), k -> k.with("rule:customer", "limit", "1"));
      assertEquals(3, l.decide(call("k1", "acme")).orElseThrow().limit(), "not read yet");
      watcher.refresh();
      assertEquals(1, l.decide(call("k2", "acme")).orElseThrow().limit());
    }
  }

  @Test
  void aCustomerWideRuleCapsSeveralKeysTogether() {
    RequestLimiter l = limiter(PER_KEY, CUSTOMER);
    assertTrue(l.decide(call("k1", "acme")).orElseThrow().allowed());
    assertTrue(l.decide(call("k1", "acme")).orElseThrow().allowed());
    Decision third = l.decide(call("k1", "acme")).orElseThrow();
    assertFalse(third.allowed());
    assertEquals("per-key", third.policy());
    assertTrue(
        l.decide(call("k2", "acme")).orElseThrow().allowed(),
        "k1's rejection did not eat acme's quota");
    Decision capped = l.decide(call("k2", "acme")).orElseThrow();
    assertFalse(capped.allowed());
    assertEquals("customer", capped.policy());
    assertTrue(l.decide(call("k3", "other")).orElseThrow().allowed(), "another customer is apart");
    assertEquals(
        1, store.incrementCalls() - 5, "one batched store call per request, whatever the rules");
  }

  @Test
  void aRequestNoKeySourceIdentifiesIsNotLimitedByThatRule() {
    RequestLimiter l = limiter(PER_KEY);
    for (int i = 0; i < 10; i++) {
      assertTrue(l.decide(TestRequest.get("/api/v1/report")).isEmpty());
    }
    assertEquals(0, store.incrementCalls());
  }

  @Test
  void theFirstKeySourceThatYieldsAValueWins() {
    Rule r = Rule.builder("r").key("user", "ip").tier(1, Duration.ofMinutes(1)).build();
    RequestLimiter l = limiter(r);
    assertTrue(
        l.decide(TestRequest.get("/x").user("alice").from("192.0.2.5")).orElseThrow().allowed());
    assertTrue(
        l.decide(TestRequest.get("/x").from("192.0.2.5")).orElseThrow().allowed(),
        "ip=… is not user=…");
    assertFalse(
        l.decide(TestRequest.get("/x").user("alice").from("192.0.2.6")).orElseThrow().allowed());
    assertFalse(l.decide(TestRequest.get("/x").from("192.0.2.5")).orElseThrow().allowed());
  }

  @Test
  void pathCapturesAndMethodsSelectTheRule() {
    Rule r =
        Rule.builder("product")
            .methods("get")
            .path("/v1/organizations/{orgId}/product/*")
            .key("path:orgId")
            .tier(1, Duration.ofMinutes(1))
            .build();
    RequestLimiter l = limiter(r);
    assertTrue(l.decide(TestRequest.get("/v1/organizations/1/product/a")).orElseThrow().allowed());
    assertFalse(
        l.decide(TestRequest.get("/v1/organizations/1/product/b")).orElseThrow().allowed(),
        "same org, another product");
    assertTrue(l.decide(TestRequest.get("/v1/organizations/2/product/a")).orElseThrow().allowed());
    assertTrue(l.decide(new TestRequest("PUT", "/v1/organizations/1/product/a")).isEmpty());
    assertFalse(
        l.decide(TestRequest.get("//v1/organizations/1/product/a/")).orElseThrow().allowed(),
        "spelling");
  }

  @Test
  void aSpoofedForwardedForFromAnUntrustedPeerChangesNothing() {
    Rule r = Rule.builder("ip").key("ip").tier(1, Duration.ofMinutes(1)).build();
    RequestLimiter l = limiter(r);
    assertTrue(l.decide(TestRequest.get("/").from("203.0.113.1")).orElseThrow().allowed());
    for (int i = 0; i < 20; i++) {
      assertFalse(
          l.decide(TestRequest.get("/").from("203.0.113.1").header("X-Forwarded-For", "1.1.1." + i))
              .orElseThrow()
              .allowed());
    }
    assertTrue(
        l.decide(TestRequest.get("/").from("10.0.0.1").header("X-Forwarded-For", "198.51.100.1"))
            .orElseThrow()
            .allowed());
    assertFalse(
        l.decide(TestRequest.get("/").from("10.0.0.9").header("X-Forwarded-For", "198.51.100.1"))
            .orElseThrow()
            .allowed(),
        "the client behind two proxies is the same client");
  }

  @Test
  void shadowRulesCountAndReportButNeverReject() {
    Rule shadow =
        Rule.builder("dark").key("ip").tier(1, Duration.ofMinutes(1)).shadow(true).build();
    RequestLimiter l = limiter(shadow);
    assertTrue(l.decide(TestRequest.get("/")).orElseThrow().allowed());
    Decision d = l.decide(TestRequest.get("/")).orElseThrow();
    assertTrue(d.allowed());
    assertTrue(d.shadowRejected());
  }

  @Test
  void theKillSwitchAndPerRuleSwitchesChangeAtRuntime() {
    RequestLimiter l = limiter(Rule.builder("r").key("ip").tier(1, Duration.ofMinutes(1)).build());
    assertTrue(l.decide(TestRequest.get("/")).isPresent());
    assertFalse(l.decide(TestRequest.get("/")).orElseThrow().allowed());
    l.setEnabled(false);
    assertTrue(l.decide(TestRequest.get("/")).isEmpty());
    l.setEnabled(true);
    l.setRuleShadow("r", true);
    assertTrue(l.decide(TestRequest.get("/")).orElseThrow().allowed());
    l.setRuleShadow("r", false);
    l.setRuleEnabled("r", false);
    assertTrue(l.decide(TestRequest.get("/")).isEmpty());
    assertThrows(IllegalArgumentException.class, () -> l.setRuleEnabled("nope", true));
  }

  @Test
  void anApplicationKeyComesFromTheResolverAndAMissingOneIsRefused() {
    Rule r =
        Rule.builder("customer").key("app:customer", "ip").tier(2, Duration.ofMinutes(1)).build();
    java.util.Map<String, String> accounts = java.util.Map.of("k1", "acme", "k2", "acme");
    RequestLimiter l =
        RequestLimiter.builder(store)
            .rules(RuleSet.builder().rule(r).build())
            .clock(clock)
            .keyResolver("customer", req -> req.header("X-Api-Key").map(accounts::get))
            .build();
    assertTrue(l.decide(TestRequest.get("/").header("X-Api-Key", "k1")).orElseThrow().allowed());
    assertTrue(l.decide(TestRequest.get("/").header("X-Api-Key", "k2")).orElseThrow().allowed());
    assertFalse(
        l.decide(TestRequest.get("/").header("X-Api-Key", "k1")).orElseThrow().allowed(),
        "both keys count against acme");
    assertTrue(
        l.decide(TestRequest.get("/").header("X-Api-Key", "unknown")).orElseThrow().allowed(),
        "no customer: the next key source (ip) counts");

    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> RequestLimiter.builder(store).rules(RuleSet.builder().rule(r).build()).build());
    assertTrue(e.getMessage().contains("no key resolver 'customer'"), e.getMessage());
  }

  /**
   * A client that makes one rule's key resolver throw (a malformed token) leaves only that rule
   * out: the other rules still count it. A rule with {@code reject} refuses it instead.
   */
  @Test
  void aResolverThatThrowsLeavesOnlyItsOwnRuleOut() {
    Rule customer =
        Rule.builder("customer").key("app:customer").tier(100, Duration.ofMinutes(1)).build();
    Rule backstop = Rule.builder("backstop").key("ip").tier(2, Duration.ofMinutes(1)).build();
    AtomicInteger errors = new AtomicInteger();
    RequestLimiter l =
        RequestLimiter.builder(store)
            .rules(RuleSet.builder().rule(customer).rule(backstop).build())
            .clock(clock)
            .listener(
                new DecisionListener() {
                  @Override
                  public void onDecision(List<String> rules, Decision decision, long storeNanos) {}

                  @Override
                  public void onError(Throwable error) {
                    errors.incrementAndGet();
                  }
                })
            .keyResolver(
                "customer",
                req -> {
                  throw new IllegalArgumentException("not a token");
                })
            .build();
    assertTrue(l.decide(TestRequest.get("/")).orElseThrow().allowed());
    assertTrue(l.decide(TestRequest.get("/")).orElseThrow().allowed());
    Decision third = l.decide(TestRequest.get("/")).orElseThrow();
    assertFalse(third.allowed(), "the backstop counts every request");
    assertEquals("backstop", third.policy());
    assertEquals(3, errors.get(), "each failure told");

    Rule strict =
        Rule.builder("customer")
            .key("app:customer")
            .tier(100, Duration.ofMinutes(1))
            .onStoreFailure(OnStoreFailure.REJECT)
            .build();
    RequestLimiter closed =
        RequestLimiter.builder(new ReferenceCounterStore())
            .rules(RuleSet.builder().rule(strict).rule(backstop).build())
            .clock(clock)
            .keyResolver(
                "customer",
                req -> {
                  throw new IllegalArgumentException("not a token");
                })
            .build();
    assertFalse(closed.decide(TestRequest.get("/")).orElseThrow().allowed(), "reject refuses");
  }

  /**
   * The kill switch and a rule's switches hold over a reload (a rules file's edit) that leaves
   * those settings as they were; a reload that changes one wins over its switch.
   */
  @Test
  void runtimeSwitchesHoldOverAReloadThatLeavesTheirSettingsAlone() {
    RequestLimiter l = RequestLimiter.builder(store).rules(oneRule(5, false)).clock(clock).build();
    l.setEnabled(false);
    l.setRuleShadow("r", true);
    l.update(oneRule(7, false));
    assertFalse(l.rules().enabled(), "the kill switch holds over an edit of the limit");
    assertTrue(l.rules().rule("r").orElseThrow().shadow(), "and so does the shadow switch");
    assertEquals(7, l.rules().rule("r").orElseThrow().tiers().get(0).limit(), "the edit applies");
    l.update(oneRule(7, true));
    l.update(oneRule(7, false));
    assertFalse(
        l.rules().rule("r").orElseThrow().shadow(), "an edit of shadow mode won over the switch");
    l.setEnabled(true);
    assertTrue(l.decide(TestRequest.get("/")).isPresent(), "limiting again");
    l.setRuleEnabled("r", false);
    l.update(RuleSet.builder().build());
    l.update(oneRule(7, false));
    assertTrue(l.rules().rule("r").orElseThrow().enabled(), "a removed rule's switch went with it");
  }

  /**
   * Two rules whose resolvers throw one shared exception leave the others counting, and the
   * application's exception is left as it is.
   */
  @Test
  void resolversThrowingOneSharedExceptionLeaveTheOtherRulesCounting() {
    IllegalArgumentException shared = new IllegalArgumentException("not a token");
    RuleSet rules =
        RuleSet.builder()
            .rule(Rule.builder("a").key("app:a").tier(100, Duration.ofMinutes(1)).build())
            .rule(Rule.builder("b").key("app:b").tier(100, Duration.ofMinutes(1)).build())
            .rule(Rule.builder("backstop").key("ip").tier(2, Duration.ofMinutes(1)).build())
            .build();
    RequestLimiter l =
        RequestLimiter.builder(store)
            .rules(rules)
            .clock(clock)
            .keyResolver(
                "a",
                req -> {
                  throw shared;
                })
            .keyResolver(
                "b",
                req -> {
                  throw shared;
                })
            .build();
    assertTrue(l.decide(TestRequest.get("/")).orElseThrow().allowed());
    assertTrue(l.decide(TestRequest.get("/")).orElseThrow().allowed());
    assertFalse(l.decide(TestRequest.get("/")).orElseThrow().allowed(), "the backstop counts");
    assertEquals(0, shared.getSuppressed().length);
  }

  private static RuleSet oneRule(long limit, boolean shadow) {
    return RuleSet.builder()
        .rule(Rule.builder("r").key("ip").tier(limit, Duration.ofMinutes(1)).shadow(shadow).build())
        .build();
  }

  @Test
  void aQuotaAttributeOverridesTheLimitPerIdentity() {
    Rule r =
        Rule.builder("r")
            .key("user")
            .tier(2, Duration.ofMinutes(1))
            .tier(10, Duration.ofHours(1))
            .build();
    RequestLimiter l =
        RequestLimiter.builder(store)
            .rules(RuleSet.builder().rule(r).build())
            .clock(clock)
            .quotaResolver(QuotaResolver.attribute("quota"))
            .build();
    for (int i = 0; i < 5; i++) {
      assertTrue(
          l.decide(TestRequest.get("/").user("gold").attribute("quota", 5))
              .orElseThrow()
              .allowed());
    }
    Decision d = l.decide(TestRequest.get("/").user("gold").attribute("quota", "5")).orElseThrow();
    assertFalse(d.allowed());
    assertEquals(5, d.limit());
    assertEquals(25, d.quotas().get(1).limit(), "other tiers scale with it");
    assertTrue(l.decide(TestRequest.get("/").user("plain").attribute("quota", "junk")).isPresent());
    assertTrue(l.decide(TestRequest.get("/").user("plain")).isPresent());
    assertFalse(l.decide(TestRequest.get("/").user("plain")).orElseThrow().allowed());
  }

  @Test
  void listenersHearEveryDecisionWithTheRulesThatApplied() {
    List<String> heard = new ArrayList<>();
    RequestLimiter l =
        RequestLimiter.builder(store)
            .rules(RuleSet.builder().rule(PER_KEY).rule(CUSTOMER).build())
            .clock(clock)
            .listener(
                (rules, d, nanos) -> heard.add(rules + " " + d.allowed() + " " + (nanos >= 0)))
            .build();
    assertTrue(l.decide(call("k", "c")).isPresent());
    assertTrue(l.decide(call("k", "c")).isPresent());
    assertTrue(l.decide(call("k", "c")).isPresent());
    assertTrue(l.decide(call("k", "c")).isPresent());
    assertEquals(
        List.of(
            "[per-key, customer] true true",
            "[per-key, customer] true true",
            "[per-key, customer] false true",
            "[per-key, customer] false false"),
        heard);
  }

  @Test
  void rulesAreCheckedWhenBuilt() {
    assertEquals(
        "duplicate rule id 'per-key'",
        assertThrows(
                IllegalArgumentException.class, () -> RuleSet.builder().rule(PER_KEY).rule(PER_KEY))
            .getMessage());
    assertThrows(IllegalArgumentException.class, () -> Rule.builder("r").key("cookie:x"));
    assertThrows(
        IllegalArgumentException.class,
        () ->
            Rule.builder("r")
                .path("/a/{id}")
                .key("path:other")
                .tier(1, Duration.ofSeconds(1))
                .build());
    assertThrows(
        IllegalArgumentException.class,
        () -> RuleSet.builder().trustedProxies(List.of("10.0.0.0/99")));
    assertThrows(IllegalArgumentException.class, () -> Rule.builder("r").build());
  }

  /**
   * In front of a servlet container, a path with dot segments is counted under both readings: as
   * JAX-RS routes it (dot segments are data) and as the container resolves it. Behind JAX-RS only
   * the routed reading counts, so a spelling cannot charge a tenant whose resource it never
   * reaches.
   */
  @Test
  void aPathWithDotSegmentsIsCountedUnderEachReadingItsContainerMayRouteBy() {
    RecordingStore recording = new RecordingStore();
    RequestLimiter l =
        RequestLimiter.builder(recording)
            .clock(clock)
            .rules(
                RuleSet.builder()
                    .rule(
                        Rule.builder("tenant")
                            .path("/t/{tenant}/**")
                            .key("path:tenant")
                            .tier(1_000, Duration.ofMinutes(1))
                            .build())
                    .rule(
                        Rule.builder("orders")
                            .path("/t/{tenant}/orders")
                            .key("path:tenant")
                            .tier(1_000, Duration.ofMinutes(1))
                            .build())
                    .build())
            .build();
    l.decide(TestRequest.get("/t/me/%2e%2e/victim/orders"));
    assertEquals(
        List.of("tenant:path:tenant=me", "tenant:path:tenant=victim", "orders:path:tenant=victim"),
        recording.take());
    l.decide(TestRequest.get("/t/me/%2e%2e/victim/orders").routedOnRawSegments());
    assertEquals(List.of("tenant:path:tenant=me"), recording.take());
    l.decide(TestRequest.get("/t/me%2F..%2Fvictim/orders"));
    assertEquals(
        List.of("tenant:path:tenant=me/../victim", "orders:path:tenant=me/../victim"),
        recording.take(),
        "an encoded '/' is data in both readings");
  }

  private static final Rule ONE_IN_FLIGHT =
      Rule.builder("one")
          .path("/api/**")
          .key("header:X-Api-Key")
          .concurrency(1, Duration.ofSeconds(30))
          .build();

  /** How many requests are counted in flight for k1 now (the store's two windows). */
  private long inFlight() {
    long w = clock.millis() / 30_000;
    String id = "header:X-Api-Key=k1";
    return store.count("one", id, 30_000, w) + store.count("one", id, 30_000, w - 1);
  }

  @Test
  void aShadowConcurrencyRuleSwitchedToEnforcingCountsExactlyWhatIsInFlight() {
    RequestLimiter l = limiter(ONE_IN_FLIGHT);
    l.applyKnobs(dev.sluice.control.Knobs.NONE.with("rule:one", "shadow", "true"));
    List<dev.sluice.Slots> held = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      dev.sluice.Outcome out = new dev.sluice.Outcome();
      assertTrue(l.decide(call("k1", "c"), out), "shadow: never refused");
      held.add(l.slots(out));
    }
    assertEquals(1, inFlight(), "the shadow rule gave back what enforcing would have");
    l.applyKnobs(dev.sluice.control.Knobs.NONE);
    held.forEach(dev.sluice.Slots::release);
    assertEquals(0, inFlight(), "each slot given back once: none left, none negative");
    dev.sluice.Outcome out = new dev.sluice.Outcome();
    assertTrue(l.decide(call("k1", "c"), out));
    assertFalse(l.decide(call("k1", "c"), new dev.sluice.Outcome()), "one in flight at most");
    l.slots(out).release();
  }

  @Test
  void slotsAskedForTwiceAreReleasedOnce() {
    RequestLimiter l = limiter(ONE_IN_FLIGHT);
    dev.sluice.Outcome first = new dev.sluice.Outcome();
    assertTrue(l.decide(call("k1", "c"), first));
    dev.sluice.Outcome second = new dev.sluice.Outcome();
    l.slots(first).release();
    assertTrue(l.decide(call("k1", "c"), second));
    l.slots(first).release(); // an adapter asking again for a request already completed
    assertEquals(1, inFlight(), "the second request still holds its slot");
    assertFalse(l.decide(call("k1", "c"), new dev.sluice.Outcome()));
  }

  @Test
  void aStoreTimeoutThatSucceedsLateLeavesNoSlotBehind() {
    RequestLimiter open = limiter(ONE_IN_FLIGHT);
    store.applyThenFail(new dev.sluice.spi.StoreTimeoutException("late"));
    dev.sluice.Outcome out = new dev.sluice.Outcome();
    assertTrue(open.decide(call("k1", "c"), out), "failed open");
    assertTrue(out.storeFailed());
    store.applyThenFail(null);
    assertEquals(1, inFlight(), "memcached applied it after the client gave up");
    open.slots(out).release();
    assertEquals(0, inFlight(), "the failed-open request gave its slot back");

    RequestLimiter closed = limiter(ONE_IN_FLIGHT.toBuilder().failClosed(true).build());
    store.applyThenFail(new dev.sluice.spi.StoreTimeoutException("late"));
    assertFalse(closed.decide(call("k1", "c"), new dev.sluice.Outcome()), "failed closed");
    store.applyThenFail(null);
    assertEquals(0, inFlight(), "a refused request's late slot is refunded at once");
  }
}
