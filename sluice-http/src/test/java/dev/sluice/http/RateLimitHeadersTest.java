package dev.sluice.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.http.RateLimitHeaders.Family;
import dev.sluice.http.RateLimitHeaders.ResetFormat;
import dev.sluice.spi.FakeClock;
import dev.sluice.spi.ReferenceCounterStore;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;

class RateLimitHeadersTest {

  private final FakeClock clock = new FakeClock();
  private final RateLimiter limiter =
      RateLimiter.fixedWindow(new ReferenceCounterStore())
          .id("get-product")
          .tier(2, Duration.ofSeconds(10))
          .tier(100, Duration.ofMinutes(1))
          .clock(clock)
          .build();

  private Map<String, String> headers(Decision d, ResetFormat reset) {
    Map<String, String> m = new LinkedHashMap<>();
    RateLimitHeaders.of(d, Set.of(Family.values()), reset, clock.millis())
        .forEach(e -> m.put(e.getKey(), e.getValue()));
    return m;
  }

  @Test
  void anAllowedResponseCarriesBothFamilies() {
    clock.advanceMillis(3_500);
    Map<String, String> h = headers(limiter.tryAcquire("k"), ResetFormat.DELTA_SECONDS);
    assertEquals("2", h.get("X-RateLimit-Limit"));
    assertEquals("1", h.get("X-RateLimit-Remaining"));
    assertEquals("1", h.get("X-RateLimit-Used"));
    assertEquals("7", h.get("X-RateLimit-Reset"), "6.5 s rounded up");
    assertEquals(
        "\"get-product-10s\";q=2;w=10, \"get-product-60s\";q=100;w=60", h.get("RateLimit-Policy"));
    assertEquals("\"get-product-10s\";r=1;t=7, \"get-product-60s\";r=99;t=57", h.get("RateLimit"));
    assertTrue(!h.containsKey("Retry-After"));
  }

  @Test
  void aRejectionAddsRetryAfterAndNoStoreAndAProblemBody() {
    clock.advanceMillis(1_200);
    limiter.tryAcquire("k");
    limiter.tryAcquire("k");
    Decision d = limiter.tryAcquire("k");
    Map<String, String> h = headers(d, ResetFormat.EPOCH_SECONDS);
    assertEquals("9", h.get("Retry-After"), "8.8 s rounded up");
    assertEquals("no-store", h.get("Cache-Control"));
    assertEquals(String.valueOf((clock.millis() + 8_800 + 999) / 1000), h.get("X-RateLimit-Reset"));
    assertEquals(429, RateLimitHeaders.status(d));
    assertEquals(
        "{\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\","
            + "\"title\":\"Quota Exceeded\",\"status\":429,"
            + "\"violated-policies\":[\"get-product-10s\"],"
            + "\"detail\":\"Rate limit of 2 per 10s exceeded for policy get-product; retry after 9 s.\","
            + "\"policy\":\"get-product\",\"limit\":2,\"window\":10,\"retryAfter\":9}",
        RateLimitHeaders.problem(d));
  }

  @Test
  void aTokenBucketsPolicyStatesItsBurstAndTheTimeToRefillIt() {
    RateLimiter bucket =
        RateLimiter.tokenBucket(new ReferenceCounterStore())
            .id("search")
            .tier(60, Duration.ofMinutes(1), 5)
            .clock(clock)
            .build();
    Map<String, String> h = headers(bucket.tryAcquire("k"), ResetFormat.DELTA_SECONDS);
    assertEquals("5", h.get("X-RateLimit-Limit"));
    assertEquals(
        "\"search\";q=5;w=5",
        h.get("RateLimit-Policy"),
        "5 tokens, refilled in 5 s at 60 a minute");
  }

  @Test
  void aRuleIdThatNoHeaderCouldCarryIsRefusedWhenTheRuleIsBuilt() {
    IllegalArgumentException e =
        org.junit.jupiter.api.Assertions.assertThrows(
            IllegalArgumentException.class, () -> Rule.builder("caf\u00e9"));
    assertTrue(e.getMessage().contains("U+00E9"), e.getMessage());
    Rule.builder("get \"quoted\" \\ path");
  }

  @Test
  void onlyTheChosenFamiliesAreEmitted() {
    Decision d = limiter.tryAcquire("k");
    var h = RateLimitHeaders.of(d, Set.of(Family.IETF), ResetFormat.DELTA_SECONDS, clock.millis());
    assertEquals(2, h.size());
    assertTrue(h.stream().noneMatch(e -> e.getKey().startsWith("X-")));
  }

  @Property
  void aNumberIsWrittenInDecimalWhereverItComesFrom(@ForAll long n, @ForAll long other) {
    assertEquals(Long.toString(n), RateLimitHeaders.decimal(n));
    assertEquals(Long.toString(n), RateLimitHeaders.limitText(n));
    assertEquals(Long.toString(other), RateLimitHeaders.limitText(other));
    assertEquals(Long.toString(n), RateLimitHeaders.limitText(n));
  }

  @Test
  void theNumbersAtTheEdgesOfTheTableAreWrittenInDecimal() {
    for (long n : new long[] {-1, 0, 1, 999, 1023, 1024, 10_000_000, Long.MIN_VALUE}) {
      assertEquals(Long.toString(n), RateLimitHeaders.decimal(n));
      assertEquals(Long.toString(n), RateLimitHeaders.limitText(n));
    }
  }
}
