package dev.sluice.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Slots;
import dev.sluice.spi.FakeClock;
import dev.sluice.spi.ReferenceCounterStore;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class AdmissionTest {

  private final FakeClock clock = new FakeClock();

  private RequestLimiter limiter(Rule rule) {
    return RequestLimiter.builder(new ReferenceCounterStore().clock(clock))
        .rules(RuleSet.builder().rule(rule).build())
        .clock(clock)
        .build();
  }

  private static TestRequest call(String key) {
    return TestRequest.get("/api/x").header("X-Api-Key", key).from("192.0.2.1");
  }

  private static final Rule TWO_A_MINUTE =
      Rule.builder("two")
          .path("/api/**")
          .key("header:X-Api-Key")
          .tier(2, Duration.ofMinutes(1))
          .build();

  @Test
  void decidesThenWritesTheHeadersThenRefuses() {
    RequestLimiter l = limiter(TWO_A_MINUTE);
    for (int i = 0; i < 2; i++) {
      Admission a = Admission.decide(l, call("k"));
      Map<String, String> headers = new LinkedHashMap<>();
      a.writeHeaders(headers::put);
      assertTrue(a.limited());
      assertFalse(a.refused());
      assertEquals(String.valueOf(1 - i), headers.get("X-RateLimit-Remaining"));
    }
    Admission a = Admission.decide(l, call("k"));
    Map<String, String> headers = new LinkedHashMap<>();
    a.writeHeaders(headers::put);
    assertTrue(a.refused());
    assertEquals(429, a.status());
    assertTrue(a.problem().contains("\"status\":429"), a.problem());
    assertTrue(headers.containsKey("Retry-After"));
    assertSame(Slots.NONE, a.slots());
  }

  @Test
  void aRequestNoRuleLimitsHasNoHeadersAndGoesOn() {
    RequestLimiter l = limiter(TWO_A_MINUTE);
    Admission a = Admission.decide(l, TestRequest.get("/other").from("192.0.2.1"));
    Map<String, String> headers = new LinkedHashMap<>();
    a.writeHeaders(headers::put);
    assertFalse(a.limited());
    assertFalse(a.refused());
    assertTrue(headers.isEmpty());
  }

  @Test
  void aHeaderSetterThatFailsLetsTheRequestGoOn() {
    RequestLimiter l = limiter(TWO_A_MINUTE);
    Admission.decide(l, call("k"));
    Admission.decide(l, call("k"));
    Admission a = Admission.decide(l, call("k"));
    a.writeHeaders(
        (name, value) -> {
          throw new IllegalStateException("response already committed");
        });
    assertFalse(a.refused(), "failed open");
    assertTrue(a.allowed());
  }
}
