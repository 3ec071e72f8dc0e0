package dev.sluice.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.sluice.spi.CounterUpdate;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

class KeysTest {

  /** The name as it is defined, computed afresh. */
  private static String expected(String prefix, CounterUpdate u) {
    return prefix
        + ":{"
        + Keys.part(u.identity())
        + "}:"
        + Keys.part(u.policy())
        + ':'
        + u.periodMillis()
        + ':';
  }

  /**
   * An empty identity is a digest: Redis Cluster hashes the whole key of an empty tag {@code {}}.
   */
  @Test
  void anEmptyPartIsADigest() {
    assertEquals(Keys.digest(""), Keys.part(""));
    assertFalse(new Keys("app").name("r", "", 1_000).contains("{}"));
  }

  /**
   * Counters come back in any order, often the same ones, from a few rules, identities and periods
   * (so recent names are reused and slots are shared): each name is always its own.
   */
  @Property(tries = 200)
  void aRecentNameIsTheNameOfThatCounterOnly(@ForAll("decisions") List<CounterUpdate> updates) {
    Keys keys = new Keys("app");
    for (CounterUpdate u : updates) {
      assertEquals(expected("app", u), keys.name(u), u.toString());
    }
  }

  @Provide
  Arbitrary<List<CounterUpdate>> decisions() {
    Arbitrary<String> rules = Arbitraries.of("per-key", "per-ip", "r", "tenant:{a}");
    Arbitrary<String> identities =
        Arbitraries.oneOf(
            Arbitraries.of("k1", "k2", "header:X-Api-Key=k1", "}{x}", "10.0.0.1"),
            Arbitraries.strings().ofMinLength(1).ofMaxLength(80));
    Arbitrary<Long> periods = Arbitraries.of(1_000L, 60_000L, 3_600_000L);
    Arbitrary<CounterUpdate> one =
        net.jqwik.api.Combinators.combine(rules, identities, periods)
            .as((r, i, p) -> new CounterUpdate(r, i, p, 7, 1));
    return one.list().ofMaxSize(400);
  }

  /**
   * 40,000 counters that differ only in their rule, then only in their identity, then only in their
   * period, each set twice over: more than the recent names kept, so names share slots and replace
   * each other, and a name is never taken for another's.
   */
  @Test
  void namesSharingASlotAreNotMixedUp() {
    Keys keys = new Keys("sluice");
    for (int dimension = 0; dimension < 3; dimension++) {
      for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < 40_000; i++) {
          CounterUpdate u =
              new CounterUpdate(
                  dimension == 0 ? "rule" + i : "rule",
                  dimension == 1 ? "client-" + i : "client",
                  dimension == 2 ? 1_000L + i : 1_000L,
                  7,
                  1);
          assertEquals(expected("sluice", u), keys.name(u));
        }
      }
    }
  }

  /** A long identity is digested every time, not kept, and its name is the same each time. */
  @Test
  void aLongIdentityHasItsDigestedName() {
    Keys keys = new Keys("sluice");
    CounterUpdate u = new CounterUpdate("rule", "k".repeat(1_000), 1_000, 7, 1);
    for (int i = 0; i < 3; i++) {
      assertEquals(expected("sluice", u), keys.name(u));
    }
  }
}
