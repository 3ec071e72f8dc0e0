package dev.sluice.yaml;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.RateLimiter;
import dev.sluice.Tier;
import dev.sluice.http.Rule;
import dev.sluice.spi.FakeClock;
import dev.sluice.spi.ReferenceCounterStore;
import java.util.List;
import java.util.Optional;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/**
 * Limits, bursts and periods near the edges of a long: the rules file refuses each one whose
 * arithmetic could overflow or saturate, naming its line and field, and a limiter built from one it
 * takes admits exactly its limit.
 */
class BigNumbersTest {

  private static final long MAX = Tier.MAX_LIMIT;

  /** A tier's values as the file writes them. */
  record Written(String algorithm, String limit, String period, Optional<String> burst) {

    String yaml() {
      return """
          rules:
            - id: r
              match: { prefix: /api }
              key: [ip]
              algorithm: %s
              tiers:
                - limit: %s
                  period: %s
          """
              .formatted(algorithm, limit, period)
          + burst.map(b -> "        burst: " + b + "\n").orElse("");
    }
  }

  @Provide
  Arbitrary<String> numbers() {
    return Arbitraries.oneOf(
        Arbitraries.longs().between(1, 1_000).map(String::valueOf),
        Arbitraries.longs().between(1, 2_000_000).map(String::valueOf),
        Arbitraries.longs().between(MAX - 3, MAX + 3).map(String::valueOf),
        Arbitraries.longs().between(1, Long.MAX_VALUE).map(String::valueOf),
        Arbitraries.longs().between(Long.MAX_VALUE - 3, Long.MAX_VALUE).map(String::valueOf),
        Arbitraries.strings().withChars('9').ofMinLength(17).ofMaxLength(25),
        Arbitraries.of("0", "-1", "6000000000000000000"));
  }

  @Provide
  Arbitrary<String> periods() {
    return Combinators.combine(
            Arbitraries.oneOf(
                Arbitraries.longs().between(1, 1_000),
                Arbitraries.longs().between(1, 999_999_999_999L)),
            Arbitraries.of("ms", "s", "m", "h", "d"))
        .as((n, unit) -> n + unit);
  }

  @Provide
  Arbitrary<Written> tiers() {
    return Combinators.combine(
            Arbitraries.of("fixed-window", "sliding-window", "token-bucket"),
            numbers(),
            periods(),
            numbers().optional())
        .as((a, l, p, b) -> new Written(a, l, p, a.equals("token-bucket") ? b : Optional.empty()));
  }

  @Property(tries = 1_000)
  void aTierIsRefusedWithItsLineAndFieldOrAdmitsExactlyItsLimit(
      @ForAll("tiers") Written w, @ForAll("fractions") double part) {
    Rule rule;
    try {
      rule = YamlRules.parse(w.yaml(), "rules.yaml").rule("r").orElseThrow();
    } catch (RulesException e) {
      int line =
          switch (e.field()) {
            case "rules[0].tiers[0].limit" -> 7;
            case "rules[0].tiers[0].period" -> 8;
            case "rules[0].tiers[0].burst" -> 9;
            default -> throw new AssertionError("not a tier's field: " + e.getMessage(), e);
          };
      assertEquals(line, e.line(), e.getMessage());
      assertEquals("rules.yaml", e.file());
      return;
    }
    Tier tier = rule.tiers().get(0);
    long l = tier.burst();
    assertTrue(l <= MAX, "taken: " + tier);
    FakeClock clock = new FakeClock();
    ReferenceCounterStore store = new ReferenceCounterStore();
    RateLimiter limiter =
        (rule.algorithm() == Algorithm.TOKEN_BUCKET
                ? RateLimiter.tokenBucket(store)
                : rule.algorithm() == Algorithm.FIXED_WINDOW
                    ? RateLimiter.fixedWindow(store)
                    : RateLimiter.slidingWindow(store))
            .tier(tier)
            .clock(clock)
            .build();
    // Part of the limit, then more than is left (refused, refunded), then exactly what is left.
    long first = Math.max(1, Math.min(l, (long) (l * part)));
    assertTrue(limiter.tryAcquire("k", first).allowed(), w + ": " + first + " of " + l);
    long left = l - first;
    assertFalse(limiter.tryAcquire("k", left + 1).allowed(), w + ": past the limit");
    if (left > 0) {
      assertTrue(limiter.tryAcquire("k", left).allowed(), w + ": the rest, " + left);
    }
    assertFalse(limiter.tryAcquire("k", 1).allowed(), w + ": admitted exactly " + l);
  }

  @Provide
  Arbitrary<Double> fractions() {
    return Arbitraries.doubles().between(0, 1);
  }

  @Test
  void theLargestLimitIsTakenAndOneMoreIsRefusedWithItsLineAndField() {
    Written ok = new Written("fixed-window", String.valueOf(MAX), "1d", Optional.empty());
    assertEquals(
        MAX, YamlRules.parse(ok.yaml(), "rules.yaml").rule("r").get().tiers().get(0).limit());
    for (String bad :
        List.of(String.valueOf(MAX + 1), String.valueOf(Long.MAX_VALUE), "9".repeat(30))) {
      RulesException e =
          org.junit.jupiter.api.Assertions.assertThrows(
              RulesException.class,
              () ->
                  YamlRules.parse(
                      new Written("sliding-window", bad, "1s", Optional.empty()).yaml(),
                      "rules.yaml"));
      assertEquals(
          "rules.yaml:7: rules[0].tiers[0].limit: must be at most 1000000000000000 (10^15), was "
              + bad,
          e.getMessage());
    }
    RulesException period =
        org.junit.jupiter.api.Assertions.assertThrows(
            RulesException.class,
            () ->
                YamlRules.parse(
                    new Written("fixed-window", "10", "999999999999d", Optional.empty()).yaml(),
                    "rules.yaml"));
    assertEquals(
        "rules.yaml:8: rules[0].tiers[0].period: period must be at most 366d", period.getMessage());
  }
}
