package dev.sluice.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Outcome;
import dev.sluice.Slots;
import dev.sluice.spi.FakeClock;
import dev.sluice.spi.ReferenceCounterStore;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What a client reads in the headers: a concurrency limit described as requests in flight, never as
 * a quota per window; and every quota's figures as they stand once a refused request is refunded,
 * the same quotas whether the store or the deny cache answered.
 */
class ClientFieldsTest {

  private final FakeClock clock = new FakeClock();
  private final ReferenceCounterStore store = new ReferenceCounterStore();

  private RequestLimiter limiter(Rule... rules) {
    RuleSet.Builder b = RuleSet.builder();
    for (Rule r : rules) {
      b.rule(r);
    }
    return RequestLimiter.builder(store).rules(b.build()).clock(clock).build();
  }

  private Map<String, String> headers(Outcome out) {
    Map<String, String> h = new LinkedHashMap<>();
    RateLimitHeaders.write(
        out,
        java.util.EnumSet.allOf(RateLimitHeaders.Family.class),
        RateLimitHeaders.ResetFormat.DELTA_SECONDS,
        clock.millis(),
        h::put);
    return h;
  }

  private static final Rule SLOW =
      Rule.builder("slow-in-flight")
          .path("/api/v1/slow")
          .key("header:X-Api-Key")
          .concurrency(2, Duration.ofSeconds(30))
          .build();

  private static final Rule BACKSTOP =
      Rule.builder("backstop")
          .path("/api/**")
          .key("header:X-Api-Key")
          .tier(60, Duration.ofSeconds(10))
          .build();

  private static TestRequest slow() {
    return TestRequest.get("/api/v1/slow").header("X-Api-Key", "k");
  }

  @Test
  void aConcurrencyRefusalNamesRequestsInFlightAndNoWindowNorReset() {
    RequestLimiter l = limiter(SLOW);
    Outcome out = new Outcome();
    for (int i = 0; i < 2; i++) {
      assertTrue(l.decide(slow(), out));
      assertTrue(l.slots(out).holds());
      Map<String, String> h = headers(out);
      assertEquals("2", h.get("X-RateLimit-Limit"));
      assertEquals(Integer.toString(1 - i), h.get("X-RateLimit-Remaining"));
      assertFalse(h.containsKey("X-RateLimit-Reset"), "no instant at which a slot is sure to free");
      assertFalse(h.containsKey("RateLimit-Policy"), "no quota per window: " + h);
      assertFalse(h.containsKey("RateLimit"), h.toString());
    }
    clock.advanceMillis(2_500);
    assertFalse(l.decide(slow(), out));
    Map<String, String> h = headers(out);
    assertEquals(429, RateLimitHeaders.status(out));
    assertEquals("1", h.get("Retry-After"), "a slot may free at any moment");
    assertEquals("2", h.get("X-RateLimit-Limit"));
    assertEquals("0", h.get("X-RateLimit-Remaining"));
    assertEquals("2", h.get("X-RateLimit-Used"));
    assertFalse(h.containsKey("X-RateLimit-Reset"), h.toString());
    assertFalse(h.containsKey("RateLimit-Policy"), h.toString());
    assertFalse(h.containsKey("RateLimit"), h.toString());
    String body = RateLimitHeaders.problem(out);
    assertTrue(body.contains("\"limitType\":\"concurrency\""), body);
    assertTrue(body.contains("send fewer requests at once"), body);
    assertFalse(body.contains("violated-policies"), "names no RateLimit-Policy item: " + body);
  }

  @Test
  void besideARateRuleTheFieldsDescribeTheRateRuleAndTheRefusalTheSlots() {
    RequestLimiter l = limiter(BACKSTOP, SLOW);
    Outcome out = new Outcome();
    Slots[] held = new Slots[2];
    for (int i = 0; i < 2; i++) {
      assertTrue(l.decide(slow(), out));
      held[i] = l.slots(out);
      Map<String, String> h = headers(out);
      assertEquals("60", h.get("X-RateLimit-Limit"), "the rate tier, though the slots are closer");
      assertEquals(Integer.toString(59 - i), h.get("X-RateLimit-Remaining"));
      assertEquals("20", h.get("X-RateLimit-Reset"), "a sliding window's count fades over two");
      assertEquals("\"backstop\";q=60;w=10", h.get("RateLimit-Policy"));
      assertEquals("\"backstop\";r=" + (59 - i) + ";t=20", h.get("RateLimit"));
    }
    assertFalse(l.decide(slow(), out));
    Map<String, String> h = headers(out);
    assertEquals("1", h.get("Retry-After"));
    assertEquals("2", h.get("X-RateLimit-Limit"), "the limit that refused: slots");
    assertFalse(h.containsKey("X-RateLimit-Reset"), h.toString());
    assertEquals("\"backstop\";q=60;w=10", h.get("RateLimit-Policy"));
    assertEquals("\"backstop\";r=58;t=20", h.get("RateLimit"), "the refused request refunded");
    held[0].release();
    assertTrue(l.decide(slow(), out), "a slot freed: the next request passes");
  }

  private static final Rule A =
      Rule.builder("A")
          .path("/api/a")
          .key("header:X-Api-Key")
          .algorithm(Algorithm.FIXED_WINDOW)
          .tier(3, Duration.ofHours(1))
          .build();

  private static final Rule B =
      Rule.builder("B")
          .path("/api/**")
          .key("header:X-Api-Key")
          .algorithm(Algorithm.FIXED_WINDOW)
          .tier(100, Duration.ofHours(1))
          .build();

  private static TestRequest to(String path) {
    return TestRequest.get(path).header("X-Api-Key", "k");
  }

  @Test
  void aRefusalReportsEveryQuotaAsItStandsOnceRefunded() {
    RequestLimiter l = limiter(A, B);
    for (int i = 0; i < 3; i++) {
      assertTrue(l.decide(to("/api/a")).orElseThrow().allowed());
    }
    Decision first = l.decide(to("/api/a")).orElseThrow();
    assertFalse(first.allowed());
    assertFalse(first.fromDenyCache());
    Map<String, String> h = headers(first.outcome());
    assertEquals("\"A\";q=3;w=3600, \"B\";q=100;w=3600", h.get("RateLimit-Policy"));
    assertEquals("\"A\";r=0;t=3600, \"B\";r=97;t=3600", h.get("RateLimit"));
    assertEquals(3, first.quotas().get(1).used(), "B without the refused request");

    Decision bOnly = l.decide(to("/api/b")).orElseThrow();
    assertEquals("\"B\";r=96;t=3600", headers(bOnly.outcome()).get("RateLimit"));

    clock.advanceMillis(1_000);
    Decision again = l.decide(to("/api/a")).orElseThrow();
    assertFalse(again.allowed());
    assertTrue(again.fromDenyCache());
    Map<String, String> cached = headers(again.outcome());
    assertEquals(h.get("RateLimit-Policy"), cached.get("RateLimit-Policy"), "the same quotas");
    assertEquals(
        "\"A\";r=0;t=3599, \"B\";r=96;t=3599",
        cached.get("RateLimit"),
        "what the store last said, with this instance's B-only request since");
    assertEquals(first.quotas().size(), again.quotas().size());
    assertEquals("3599", cached.get("Retry-After"));
    assertEquals("0", cached.get("X-RateLimit-Remaining"));
  }
}
