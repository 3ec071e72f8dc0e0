package dev.sluice.store.memcached;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.spi.CounterUpdate;
import org.junit.jupiter.api.Test;

/** Counter keys carry the encoding of their value, so two releases never share one. */
class KeysTest {

  private final Keys keys = new Keys("p");

  @Test
  void aWindowKeyNamesItsFormatBeforeItsWindow() {
    CounterUpdate u = new CounterUpdate("r", "id", 1000, 42, 1);
    assertEquals("p:r:id:1000:w1.42", keys.key(u));
    assertEquals("p:r:id:1000:w1.", keys.name(u), "the window's name is its key's prefix");
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
}
