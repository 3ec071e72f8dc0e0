package dev.sluice.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.spi.FakeClock;
import dev.sluice.spi.RecordingStore;
import java.time.Duration;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * A client behind a per-address backstop sends requests with identities it makes up (a new API key
 * each time) to fill a store that evicts. Once the backstop refuses its address, the deny cache
 * refuses each such request with no store call: the flood creates no counter, and so cannot push
 * another client's counters out.
 */
class IdentityFloodTest {

  private static final Rule BACKSTOP =
      Rule.builder("backstop")
          .path("/**")
          .key("ip")
          .algorithm(Algorithm.FIXED_WINDOW)
          .tier(1_000, Duration.ofMinutes(1))
          .build();

  private static Rule perKey(Algorithm algorithm) {
    return Rule.builder("per-key")
        .path("/api/**")
        .key("header:X-Api-Key")
        .algorithm(algorithm)
        .tier(10, Duration.ofMinutes(1))
        .build();
  }

  @Property(tries = 60)
  void onceTheAddressIsRefusedNewIdentitiesReachNoStore(
      @ForAll @IntRange(min = 1, max = 50) int backstop,
      @ForAll @IntRange(min = 1, max = 300) int flood,
      @ForAll Algorithm algorithm,
      @ForAll @IntRange(min = 0, max = 59_999) int into) {
    FakeClock clock = new FakeClock(60_000L * 29_000_000 + into);
    RecordingStore store = new RecordingStore();
    Rule limit =
        Rule.builder("backstop")
            .path("/**")
            .key("ip")
            .algorithm(Algorithm.FIXED_WINDOW)
            .tier(backstop, Duration.ofMinutes(1))
            .build();
    RequestLimiter limiter =
        RequestLimiter.builder(store)
            .rules(RuleSet.builder().rule(limit).rule(perKey(algorithm)).build())
            .clock(clock)
            .build();
    int admitted = 0;
    int i = 0;
    // Up to the backstop, and the one request that finds it spent (the store says so).
    for (; i <= backstop; i++) {
      admitted += allowed(limiter, "key-" + i) ? 1 : 0;
    }
    assertEquals(backstop, admitted);
    store.take();
    for (int j = 0; j < flood; j++, i++) {
      assertFalse(allowed(limiter, "key-" + i), "refused by the backstop");
    }
    assertEquals(List.of(), store.take(), "the flood reached the store");
    // Another address is not held up, and the backstop's next window counts the address again.
    assertTrue(
        limiter
            .decide(
                TestRequest.get("/api/v1/report").header("X-Api-Key", "other").from("192.0.2.9"))
            .map(Decision::allowed)
            .orElse(true));
    clock.advance(Duration.ofMinutes(1));
    assertTrue(allowed(limiter, "key-" + i), "the next window admits the address");
  }

  @Property(tries = 20)
  void aSpentIdentityBehindAnAddressUnderItsBackstopStillReachesTheStore(
      @ForAll Algorithm algorithm) {
    // The deny cache answers alone only when a denied policy's own figures refuse: a client whose
    // per-key limit is spent, behind an address under its backstop, is decided as before.
    RecordingStore store = new RecordingStore();
    RequestLimiter limiter =
        RequestLimiter.builder(store)
            .rules(RuleSet.builder().rule(BACKSTOP).rule(perKey(algorithm)).build())
            .clock(new FakeClock(60_000L * 29_000_000))
            .build();
    int admitted = 0;
    for (int i = 0; i < 12; i++) {
      admitted += allowed(limiter, "same") ? 1 : 0;
    }
    assertEquals(10, admitted);
    assertFalse(allowed(limiter, "same"));
    assertTrue(allowed(limiter, "fresh"), "a new key from the same address is its own client");
  }

  private static boolean allowed(RequestLimiter limiter, String key) {
    return limiter
        .decide(TestRequest.get("/api/v1/report").header("X-Api-Key", key))
        .map(Decision::allowed)
        .orElse(true);
  }
}
