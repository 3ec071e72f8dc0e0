package dev.sluice.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterUpdate;
import dev.sluice.spi.Counts;
import dev.sluice.spi.FakeClock;
import dev.sluice.spi.ReferenceCounterStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Regression tests, one per bug a code review found; each failed before its fix. */
class ReviewedBugsTest {

  private final FakeClock clock = new FakeClock();
  private final ReferenceCounterStore store = new ReferenceCounterStore();

  @Test
  void permitsAboveTheSmallestLimitAreRejectedBeforeAnyStoreCall() {
    RateLimiter l =
        RateLimiter.slidingWindow(store)
            .clock(clock)
            .tier(10, Duration.ofSeconds(1))
            .tier(100, Duration.ofMinutes(1))
            .build();
    assertTrue(l.tryAcquire("k").allowed());
    int calls = store.incrementCalls();
    Decision huge = l.tryAcquire("k", Long.MAX_VALUE);
    assertFalse(huge.allowed());
    assertEquals(10, huge.limit());
    assertEquals(Duration.ofSeconds(1), huge.retryAfter(), "it can never pass: the tier's period");
    assertEquals(calls, store.incrementCalls(), "no store call");
    assertFalse(l.tryAcquire("k", 11).allowed());
    for (int i = 0; i < 9; i++) {
      assertTrue(l.tryAcquire("k").allowed(), "the key's own count was untouched: " + i);
    }
    assertFalse(l.tryAcquire("k").allowed(), "and it is still limited");
  }

  /** Holds every increment until {@code parties} of them have been counted, as a burst would. */
  private static final class Burst implements CounterStore {
    private final CounterStore delegate;
    volatile CyclicBarrier barrier;

    Burst(CounterStore delegate) {
      this.delegate = delegate;
    }

    @Override
    public Counts increment(List<CounterUpdate> updates) {
      Counts out = delegate.increment(updates);
      CyclicBarrier b = barrier;
      if (b != null) {
        try {
          b.await(30, TimeUnit.SECONDS);
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      }
      return out;
    }

    @Override
    public void decrement(List<CounterUpdate> updates) {
      delegate.decrement(updates);
    }
  }

  @Test
  void concurrentRejectionsDoNotInflateRetryAfterNorTheDenyCache() throws Exception {
    long minute = 60_000;
    long windowStart = clock.millis() / minute * minute;
    clock.set(windowStart + minute / 2);
    store.increment(
        List.of(new CounterUpdate("default", "k", minute, windowStart / minute - 1, 100)));
    Burst burst = new Burst(store);
    RateLimiter l =
        RateLimiter.slidingWindow(burst).clock(clock).tier(100, Duration.ofMinutes(1)).build();
    for (int i = 0; i < 50; i++) {
      assertTrue(l.tryAcquire("k").allowed(), "half the previous window plus 50 fits: " + i);
    }
    int n = 50;
    burst.barrier = new CyclicBarrier(n);
    ExecutorService pool = Executors.newFixedThreadPool(n);
    List<Future<Decision>> answers = new ArrayList<>();
    try {
      for (int i = 0; i < n; i++) {
        answers.add(pool.submit(() -> l.tryAcquire("k")));
      }
      for (Future<Decision> f : answers) {
        Decision d = f.get(1, TimeUnit.MINUTES);
        assertFalse(d.allowed());
        // The estimate drops below 100 once 1 % of the minute has passed: 600 ms, not ~30 s.
        assertTrue(d.retryAfter().toMillis() <= 600, "retryAfter " + d.retryAfter());
      }
    } finally {
      pool.shutdownNow();
    }
    burst.barrier = null;
    clock.advanceMillis(600);
    Decision later = l.tryAcquire("k");
    assertTrue(later.allowed(), "the deny cache let go at the true instant: " + later);
  }

  private RequestLimiter limiter(QuotaResolver quotas, Rule... rules) {
    RuleSet.Builder b = RuleSet.builder();
    for (Rule r : rules) {
      b.rule(r);
    }
    return RequestLimiter.builder(store)
        .rules(b.build())
        .clock(clock)
        .quotaResolver(quotas)
        .build();
  }

  @Test
  void aShadowRuleNeverShowsInHeadersEvenAlone() {
    Rule shadow =
        Rule.builder("dark")
            .path("/api/**")
            .key("ip")
            .algorithm(Algorithm.FIXED_WINDOW)
            .tier(1, Duration.ofMinutes(1))
            .shadow(true)
            .build();
    RequestLimiter l = limiter(QuotaResolver.NONE, shadow);
    for (int i = 0; i < 3; i++) {
      Decision d = l.decide(TestRequest.get("/api/x")).orElseThrow();
      assertNotNull(d);
      assertTrue(d.allowed());
      assertEquals(i > 0, d.shadowRejected());
      assertEquals(
          List.of(),
          RateLimitHeaders.of(
              d,
              EnumSet.allOf(RateLimitHeaders.Family.class),
              RateLimitHeaders.ResetFormat.DELTA_SECONDS,
              clock.millis()),
          "no header for request " + i);
    }
  }

  @Test
  void aShadowRulesWouldBeRejectionGivesItsPermitsBackAsEnforcementWould() {
    Rule shadow =
        Rule.builder("dark")
            .path("/api/**")
            .key("ip")
            .algorithm(Algorithm.FIXED_WINDOW)
            .tier(2, Duration.ofMinutes(1))
            .shadow(true)
            .build();
    Rule enforced =
        Rule.builder("real")
            .path("/api/**")
            .key("ip")
            .algorithm(Algorithm.FIXED_WINDOW)
            .tier(100, Duration.ofMinutes(1))
            .build();
    long window = clock.millis() / 60_000;
    for (RequestLimiter l :
        List.of(
            limiter(QuotaResolver.NONE, shadow), limiter(QuotaResolver.NONE, shadow, enforced))) {
      store.clear();
      for (int i = 0; i < 5; i++) {
        assertTrue(l.decide(TestRequest.get("/api/x")).orElseThrow().allowed());
      }
      assertEquals(
          2,
          store.count("dark", "ip=192.0.2.1", 60_000, window),
          "what enforcement would have counted");
    }
    assertEquals(
        5,
        store.count("real", "ip=192.0.2.1", 60_000, window),
        "the enforced rule keeps its count");
  }

  @Test
  void aQuotaOverrideDoesNotShareDenialsWithTheBasePolicy() {
    Rule r =
        Rule.builder("r")
            .path("/api/**")
            .key("ip")
            .algorithm(Algorithm.FIXED_WINDOW)
            .tier(1, Duration.ofMinutes(1))
            .build();
    RequestLimiter l = limiter(QuotaResolver.attribute("quota"), r);
    assertTrue(l.decide(TestRequest.get("/api/x")).orElseThrow().allowed());
    Decision denied = l.decide(TestRequest.get("/api/x")).orElseThrow();
    assertFalse(denied.allowed());
    Decision upgraded = l.decide(TestRequest.get("/api/x").attribute("quota", 10)).orElseThrow();
    assertTrue(
        upgraded.allowed(), "a base-limit denial must not answer for a limit of 10: " + upgraded);
    assertFalse(upgraded.fromDenyCache());
  }

  @Test
  void aGetRuleCoversHead() {
    Rule r =
        Rule.builder("r")
            .methods("GET")
            .path("/api/**")
            .key("ip")
            .algorithm(Algorithm.FIXED_WINDOW)
            .tier(2, Duration.ofMinutes(1))
            .build();
    RequestLimiter l = limiter(QuotaResolver.NONE, r);
    assertTrue(l.decide(new TestRequest("HEAD", "/api/report")).orElseThrow().allowed());
    assertTrue(l.decide(new TestRequest("head", "/api/report")).orElseThrow().allowed());
    assertFalse(l.decide(new TestRequest("HEAD", "/api/report")).orElseThrow().allowed());
    assertTrue(
        l.decide(new TestRequest("POST", "/api/report")).isEmpty(), "other methods stay outside");
  }

  @Test
  void theDefaultKeyTrustsNoHeaderAClientCanInvent() {
    Rule r =
        Rule.builder("r")
            .path("/api/**")
            .algorithm(Algorithm.FIXED_WINDOW)
            .tier(2, Duration.ofMinutes(1))
            .build();
    assertEquals(List.of("user", "ip"), r.key());
    RequestLimiter l = limiter(QuotaResolver.NONE, r);
    int allowed = 0;
    for (int i = 0; i < 10; i++) {
      allowed +=
          l.decide(TestRequest.get("/api/x").header("X-Api-Key", "invented-" + i))
                  .orElseThrow()
                  .allowed()
              ? 1
              : 0;
    }
    assertEquals(2, allowed, "a new X-Api-Key per request is still one client");
  }
}
