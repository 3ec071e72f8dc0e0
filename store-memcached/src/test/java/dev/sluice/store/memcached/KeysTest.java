package dev.sluice.store.memcached;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.spi.CounterUpdate;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/** Counter keys carry the encoding of their value, so two releases never share one. */
class KeysTest {

  private final Keys keys = new Keys("p");

  @Test
  void aWindowKeyNamesItsFormatBeforeItsWindow() {
    CounterUpdate u = new CounterUpdate("r", "id", 1000, 42, 1);
    assertEquals("p:r:id:1000:w1.42", keys.key(u));
    assertEquals("p:r:id:1000:w1.", keys.named(u).name(), "the window's name is its key's prefix");
  }

  @Test
  void anUnsafeIdentityIsDigestedOnceAndItsDigestReused() {
    String identity = "header:X-Api-Key=key-7";
    CounterUpdate u = new CounterUpdate("r", identity, 1000, 42, 1);
    assertEquals("p:r:" + Keys.digest(identity) + ":1000:w1.42", keys.key(u));
    assertSame(Keys.part(identity), Keys.part(identity), "the second time from the recent digests");
    for (int i = 0; i < 10_000; i++) {
      String other = "header:X-Api-Key=key-" + i;
      assertEquals(Keys.digest(other), Keys.part(other), other);
    }
  }

  @Test
  void aRunningCounterNamesItsOwnFormat() {
    CounterUpdate tat = new CounterUpdate("r", "id", 1000, 42, 5, 7);
    assertEquals("p:r:id:1000:tat1", keys.key(tat));
  }

  @Test
  void keysOfTheUnversionedFormatAreNeverProduced() {
    // What instances of the release before versioned keys wrote: counts and TATs in these keys
    // are another encoding, and are never read as this release's.
    for (long w = 0; w < 50; w++) {
      String window = keys.key(new CounterUpdate("r", "id", 1000, w, 1));
      assertNotEquals("p:r:id:1000:" + w, window);
      assertTrue(window.startsWith("p:r:id:1000:" + Keys.WINDOW_FORMAT + "."), window);
    }
    assertNotEquals("p:r:id:1000:tat", keys.key(new CounterUpdate("r", "id", 1000, 0, 5, 7)));
  }

  @Test
  void aCounterThatComesBackGetsTheSameNameAndInItsWindowTheSameKey() {
    CounterUpdate u = new CounterUpdate("r", "header:X-Api-Key=k", 60_000, 42, 1);
    Keys.Named first = keys.named(u);
    assertSame(first, keys.named(new CounterUpdate("r", "header:X-Api-Key=k", 60_000, 42, 3)));
    Keys.Named next = keys.named(new CounterUpdate("r", "header:X-Api-Key=k", 60_000, 43, 1));
    assertSame(first.name(), next.name(), "one name whatever the window");
    assertEquals(first.name() + 43, next.key());
    CounterUpdate perSecond = new CounterUpdate("r", "header:X-Api-Key=k", 1000, 42, 1);
    assertEquals(first.name().replace(":60000:", ":1000:"), keys.named(perSecond).name());
  }

  /**
   * However counters come and go (more of them than the recent names hold, windows in any order,
   * one identity under several policies and periods), a counter's key is the one its parts name.
   */
  @Property(tries = 200)
  void aKeyIsAlwaysTheOneItsPartsName(@ForAll("counters") List<CounterUpdate> updates) {
    Keys k = new Keys("p");
    for (CounterUpdate u : updates) {
      String name =
          "p:" + Keys.part(u.policy()) + ":" + Keys.part(u.identity()) + ":" + u.periodMillis();
      assertEquals(name + ":w1.", k.named(u).name());
      assertEquals(name + ":w1." + u.window(), k.key(u));
    }
  }

  @Provide
  Arbitrary<List<CounterUpdate>> counters() {
    Arbitrary<CounterUpdate> u =
        Combinators.combine(
                Arbitraries.of("r", "s", "a:b"),
                Arbitraries.oneOf(
                    // digested (':'), as they are, and too long to be kept
                    Arbitraries.integers().between(0, 20_000).map(i -> "header:X-Api-Key=key-" + i),
                    Arbitraries.integers().between(0, 20_000).map(i -> "user-" + i),
                    Arbitraries.integers().between(0, 9).map(i -> "t".repeat(129) + i)),
                Arbitraries.of(1000L, 60_000L, 3_600_000L),
                Arbitraries.longs().between(-2, 3))
            .as((policy, id, period, w) -> new CounterUpdate(policy, id, period, w, 1));
    return u.list().ofMinSize(1).ofMaxSize(12_000);
  }
}
