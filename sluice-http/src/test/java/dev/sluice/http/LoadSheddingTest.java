package dev.sluice.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.DecisionListener;
import dev.sluice.Outcome;
import dev.sluice.Slots;
import dev.sluice.spi.FakeClock;
import dev.sluice.spi.ReferenceCounterStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class LoadSheddingTest {

  private final FakeClock clock = new FakeClock();
  private final ReferenceCounterStore store = new ReferenceCounterStore();
  private final List<String> shed = new ArrayList<>();

  private static final List<PriorityClass> CLASSES =
      List.of(
          PriorityClass.of("critical", 0).withMethods("POST").withPath("/api/v1/lead/{id}"),
          PriorityClass.of("test", 3).withHeader("X-Test-Mode", "true"),
          PriorityClass.of("writes", 1).withMethods("POST", "PUT", "PATCH", "DELETE"),
          PriorityClass.of("reads", 2));

  private final java.util.concurrent.atomic.AtomicInteger errors =
      new java.util.concurrent.atomic.AtomicInteger();

  private RequestLimiter limiter(Shedding shedding) {
    return limiter(
        Rule.builder("per-ip").key("ip").tier(1_000, Duration.ofMinutes(1)).build(), shedding);
  }

  /**
   * A limiter of {@code rule} and {@code shedding} (none when null), whose {@code app:customer}
   * resolver always throws.
   */
  private RequestLimiter limiter(Rule rule, Shedding shedding) {
    RuleSet.Builder rules = RuleSet.builder().rule(rule);
    if (shedding != null) {
      rules.shedding(shedding);
    }
    return RequestLimiter.builder(store)
        .clock(clock)
        .listener(
            new DecisionListener() {
              @Override
              public void onDecision(List<String> r, dev.sluice.Decision d, long n) {}

              @Override
              public void onShed(String priorityClass, String shedder) {
                shed.add(priorityClass + "/" + shedder);
              }

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
        .rules(rules.build())
        .build();
  }

  private static TestRequest read() {
    return TestRequest.get("/api/v1/report").from("192.0.2.1");
  }

  private static TestRequest critical() {
    return new TestRequest("POST", "/api/v1/lead/7").from("192.0.2.2");
  }

  /** Decides and, when allowed, keeps the request in flight: its slots. */
  private static Slots enter(RequestLimiter l, RequestInfo r, Outcome out) {
    l.decide(r, out);
    return l.slots(out);
  }

  @Test
  void theFleetShedderKeepsItsReserveForCriticalRequests() {
    RequestLimiter l = limiter(Shedding.builder().classes(CLASSES).fleet(4, 0.25).build());
    List<Slots> held = new ArrayList<>();
    Outcome out = new Outcome();
    for (int i = 0; i < 3; i++) {
      held.add(enter(l, read(), out));
      assertTrue(out.allowed(), "non-critical " + i + " of 3 = 4 × (1 − 0.25)");
      assertFalse(out.shed());
      assertEquals("reads", out.priorityClass());
      assertEquals(
          "per-ip", out.policy(), "the headers describe the client's quota, not the fleet");
      assertEquals("\"per-ip\";q=1000;w=60", out.ietfPolicy(), "the fleet's count is no quota");
      assertFalse(out.ietfState().contains("load-shedding"), out.ietfState());
      assertEquals(
          "\"per-ip\";q=1000;w=60",
          out.toDecision().orElseThrow().outcome().ietfPolicy(),
          "nor in a decision's copy");
    }
    Slots refused = enter(l, read(), out);
    assertFalse(out.allowed());
    assertTrue(out.shed());
    assertEquals(503, RateLimitHeaders.status(out));
    assertTrue(
        RateLimitHeaders.problem(out).contains("temporary-reduced-capacity"),
        RateLimitHeaders.problem(out));
    assertTrue(RateLimitHeaders.problem(out).contains("\"priorityClass\":\"reads\""));
    assertFalse(refused.holds(), "a shed request holds nothing");
    List<String> headers = new ArrayList<>();
    RateLimitHeaders.write(
        out,
        java.util.EnumSet.allOf(RateLimitHeaders.Family.class),
        RateLimitHeaders.ResetFormat.DELTA_SECONDS,
        clock.millis(),
        (n, v) -> headers.add(n));
    assertEquals(List.of("Retry-After", "Cache-Control"), headers, "no quota headers on a shed");

    held.add(enter(l, critical(), out));
    assertTrue(out.allowed(), "the reserve is critical's");
    assertEquals("critical", out.priorityClass());
    enter(l, critical(), out);
    assertFalse(out.allowed(), "past the whole capacity, critical is shed too");
    assertEquals(List.of("reads/fleet-usage", "critical/fleet-usage"), shed);

    held.get(0).release();
    enter(l, read(), out);
    assertTrue(out.allowed(), "a released slot is free at once");
  }

  /**
   * A client that makes the only rule's key resolver throw (a malformed token) is still subject to
   * both load shedders: the rule fails open, the shedders do not.
   */
  @Test
  void aResolverThatThrowsLeavesTheSheddersIn() {
    Rule customer =
        Rule.builder("customer").key("app:customer").tier(1_000, Duration.ofMinutes(1)).build();
    RequestLimiter l =
        limiter(
            customer,
            Shedding.builder()
                .classes(CLASSES)
                .fleet(4, 0.25)
                .workers(2)
                .delay(Duration.ZERO)
                .build());
    Outcome out = new Outcome();
    List<Slots> held = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      held.add(enter(l, read(), out));
      assertTrue(out.allowed(), "non-critical " + i + " of 3 = 4 × (1 − 0.25)");
      assertEquals("reads", out.priorityClass());
      assertEquals(
          dev.sluice.StoreStatus.OK, out.storeStatus(), "decided by the shedders, as counted");
      assertFalse(out.ietfPolicy().contains("customer"), "the failed rule names no quota");
    }
    assertEquals(3, l.loadShedder().orElseThrow().inFlight(), "in flight on the workers");
    enter(l, read(), out);
    assertFalse(out.allowed(), "the fleet's capacity holds for a request whose rule failed");
    assertTrue(out.shed());
    assertEquals(503, RateLimitHeaders.status(out));
    assertEquals(List.of("reads/fleet-usage"), shed);
    assertEquals(4, errors.get(), "each failure told");
    for (Slots s : held) {
      s.release();
    }
    assertEquals(0, l.loadShedder().orElseThrow().inFlight());

    // Without shedding the rule alone decides, as on a store failure: open.
    RequestLimiter open = limiter(customer, null);
    for (int i = 0; i < 3; i++) {
      open.decide(read(), out);
      assertTrue(out.allowed(), "failed open");
      assertEquals(dev.sluice.StoreStatus.FAILED_OPEN, out.storeStatus());
    }
  }

  @Test
  void theWorkerShedderShedsTheLowestClassFirstAndNeverCritical() {
    RequestLimiter l =
        limiter(Shedding.builder().classes(CLASSES).workers(2).delay(Duration.ZERO).build());
    // Two requests in flight on two workers: utilization 1, for a minute.
    Outcome out = new Outcome();
    Slots a = enter(l, read(), out);
    Slots b = enter(l, read(), out);
    assertEquals(2, l.loadShedder().orElseThrow().inFlight());
    for (int s = 0; s < 60; s++) {
      clock.advance(Duration.ofSeconds(1));
      l.loadShedder().orElseThrow().amount();
    }
    // Half of the way: the test class (rank 1) all shed, reads (rank 2) half, writes none.
    assertEquals(0.5, l.loadShedder().orElseThrow().amount(), 1e-9);
    enter(l, read().header("X-Test-Mode", "true"), out);
    assertTrue(out.shed(), "test mode goes first");
    assertEquals(503, RateLimitHeaders.status(out));
    assertEquals(List.of("test/worker-utilization"), shed);
    assertEquals(2, l.loadShedder().orElseThrow().inFlight(), "a shed request is not in flight");
    Slots c = enter(l, critical(), out);
    assertTrue(out.allowed(), "critical is never shed");
    c.release();
    a.release();
    b.release();
    assertEquals(0, l.loadShedder().orElseThrow().inFlight());
  }

  @Test
  void anAdaptiveLimitNeedsItsModule() {
    IllegalStateException e =
        org.junit.jupiter.api.Assertions.assertThrows(
            IllegalStateException.class,
            () -> limiter(Shedding.builder().classes(CLASSES).adaptive("gradient2").build()));
    assertTrue(e.getMessage().contains("sluice-shedding-adaptive"), e.getMessage());
  }

  /**
   * A spelling of a path cannot move a request into the critical class: under a servlet container
   * (both readings of a path with dot segments) the class shed first wins, and under JAX-RS the
   * class is the routed reading's.
   */
  @Test
  void aSpellingOfThePathCannotMoveARequestIntoTheCriticalClass() {
    RequestLimiter l = limiter(Shedding.builder().classes(CLASSES).build());
    Outcome out = new Outcome();
    for (String path :
        new String[] {
          "/api/v1/x/../lead/7",
          "/api/v1/x/%2e%2e/lead/7",
          "/api/v1/lead/7/x/..",
          "/api/v1/lead/x/%2E",
          "/api/v1/lead/7/.",
          "/api/./v1/lead/7"
        }) {
      for (boolean jaxrs : new boolean[] {false, true}) {
        TestRequest r = new TestRequest("POST", path).from("192.0.2.3");
        l.decide(jaxrs ? r.routedOnRawSegments() : r, out);
        assertEquals("writes", out.priorityClass(), path + (jaxrs ? " (JAX-RS)" : " (servlet)"));
        l.slots(out).release();
      }
    }
    for (String path : new String[] {"/api/v1/lead/7", "/api/v1/lead/7;x=1", "/api//v1/lead/7/"}) {
      l.decide(new TestRequest("POST", path).from("192.0.2.3"), out);
      assertEquals("critical", out.priorityClass(), path + " is the critical route's");
      l.slots(out).release();
    }
    // Jersey serves this to /api/v1/lead/{id} with id "..": critical there. A servlet container
    // resolves it to /api/v1, so in front of one it is shed as a write.
    TestRequest dots = new TestRequest("POST", "/api/v1/lead/%2e%2e").from("192.0.2.3");
    l.decide(dots, out);
    assertEquals("writes", out.priorityClass());
    l.slots(out).release();
    l.decide(dots.routedOnRawSegments(), out);
    assertEquals("critical", out.priorityClass());
    l.slots(out).release();
  }
}
