package dev.sluice.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * A store that implements only what the SPI requires (increment and decrement: no shared values, no
 * clock, no asynchronous form of its own) meets the counter contract: shared values are an optional
 * capability, tested by {@link SharedValuesContract} for the stores that keep them.
 */
class StoreWithoutSharedValuesTest extends CounterStoreContract {

  /** Counts in a reference store and offers nothing else. */
  private static final class Minimal implements CounterStore {
    private final ReferenceCounterStore counters = new ReferenceCounterStore();

    @Override
    public Counts increment(List<CounterUpdate> updates) {
      return counters.increment(updates);
    }

    @Override
    public void decrement(List<CounterUpdate> updates) {
      counters.decrement(updates);
    }
  }

  @Override
  protected CounterStore createStore() {
    return new Minimal();
  }

  @Test
  void keepsNoSharedValues() {
    assertEquals(Optional.empty(), store.sharedValues());
  }
}
