package dev.sluice.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.spi.FakeClock;
import dev.sluice.spi.ReferenceCounterStore;
import java.time.Duration;
import java.util.Optional;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * A key read from a header is the field's value without the whitespace and control characters
 * around it, as HTTP reads it and as an application that trims the same header sees it: padding a
 * spent key never opens a new counter.
 */
class HeaderKeyTest {

  private static RequestLimiter oneAnHour() {
    return RequestLimiter.builder(new ReferenceCounterStore())
        .clock(new FakeClock())
        .rules(
            RuleSet.builder()
                .rule(
                    Rule.builder("per-key")
                        .key("header:X-Api-Key")
                        .algorithm(Algorithm.FIXED_WINDOW)
                        .tier(1, Duration.ofHours(1))
                        .build())
                .build())
        .build();
  }

  private static Optional<Decision> call(RequestLimiter l, String key) {
    return l.decide(TestRequest.get("/api/v1/report").header("X-Api-Key", key));
  }

  /** Space, tab and the other characters {@link String#trim} takes off. */
  @Provide
  Arbitrary<String> padding() {
    return Arbitraries.strings().withCharRange('\u0000', ' ').ofMaxLength(4);
  }

  @Provide
  Arbitrary<String> keys() {
    return Arbitraries.strings()
        .withCharRange('!', '~')
        .withChars(' ', '\t', '\u0001', 'é', '鍵')
        .ofMinLength(1)
        .ofMaxLength(20)
        .filter(k -> !k.trim().isEmpty());
  }

  @Property(tries = 300)
  void aPaddedKeyCountsAsTheKey(
      @ForAll("keys") String key,
      @ForAll("padding") String before,
      @ForAll("padding") String after,
      @ForAll boolean paddedFirst) {
    RequestLimiter l = oneAnHour();
    String padded = before + key + after;
    Decision first = call(l, paddedFirst ? padded : key).orElseThrow();
    assertTrue(first.allowed());
    Decision second = call(l, paddedFirst ? key : padded).orElseThrow();
    assertFalse(
        second.allowed(), "[" + escape(padded) + "] and [" + escape(key) + "]: one counter");
    Decision trimmed = call(l, key.trim()).orElseThrow();
    assertFalse(trimmed.allowed(), "the trimmed key is the same one");
  }

  /** Keys that differ once trimmed (inner spaces and tabs included) keep their own counters. */
  @Property(tries = 300)
  void keysThatDifferTrimmedStayApart(
      @ForAll("keys") String a, @ForAll("keys") String b, @ForAll("padding") String pad) {
    net.jqwik.api.Assume.that(!a.trim().equals(b.trim()));
    RequestLimiter l = oneAnHour();
    assertTrue(call(l, pad + a + pad).orElseThrow().allowed());
    assertTrue(
        call(l, b).orElseThrow().allowed(), "[" + escape(b) + "] is not [" + escape(a) + "]");
    assertFalse(call(l, a).orElseThrow().allowed());
    assertFalse(call(l, b + pad).orElseThrow().allowed());
  }

  /** An application's resolver reads the header as the {@code header:} source does. */
  @Property(tries = 100)
  void aResolverReadsTheHeaderTrimmed(@ForAll("keys") String key, @ForAll("padding") String pad) {
    RequestInfo r = TestRequest.get("/").header("X-Api-Key", pad + key + pad);
    assertEquals(Optional.of(key.trim()), r.header("X-Api-Key"));
  }

  @Property(tries = 100)
  void aKeyOfPaddingAloneIsNoKey(@ForAll("padding") String padding) {
    RequestLimiter l = oneAnHour();
    for (int i = 0; i < 3; i++) {
      assertEquals(Optional.empty(), call(l, padding), "no value, as without the header");
    }
  }

  private static String escape(String s) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      b.append(c < ' ' ? String.format("\\u%04x", (int) c) : String.valueOf(c));
    }
    return b.toString();
  }
}
