package dev.sluice.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * What a store that keeps shared values ({@link CounterStore#sharedValues}) must do with them. An
 * optional capability: a store's contract test opts in by implementing this interface next to
 * extending {@link CounterStoreContract}, which supplies {@link #store()}.
 */
public interface SharedValuesContract {

  /** {@return the store under test, new and empty for each test} */
  CounterStore store();

  @Test
  default void keepsSharedValues() {
    assertTrue(store().sharedValues().isPresent(), "a store that opts in keeps shared values");
  }

  @Test
  default void aSharedValueIsWrittenOnlyOverTheVersionItReplaces() {
    SharedValues v = store().sharedValues().orElseThrow();
    String name = "contract-" + System.nanoTime();
    assertEquals(Optional.empty(), v.get(name));
    String text = "rule:a limit=2\nthrottle:é rate=0.5\n";
    assertTrue(v.compareAndSet(name, 0, text, Duration.ZERO));
    assertFalse(
        v.compareAndSet(name, 0, "second add", Duration.ZERO), "only one writer creates it");
    SharedValues.Versioned first = v.get(name).orElseThrow();
    assertEquals(text, first.value(), "text with newlines and non-ASCII comes back as written");
    assertTrue(v.compareAndSet(name, first.version(), "next", Duration.ZERO));
    assertFalse(
        v.compareAndSet(name, first.version(), "lost update", Duration.ZERO),
        "a writer holding an old version must read again");
    assertEquals("next", v.get(name).orElseThrow().value());
  }
}
