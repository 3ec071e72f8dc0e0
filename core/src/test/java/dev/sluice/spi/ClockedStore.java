package dev.sluice.spi;

import java.util.List;
import java.util.Optional;

/**
 * A store's counters on a clock of a test's making: {@code counters} count, {@code measured} is the
 * store's clock as one instance measured it.
 */
public record ClockedStore(CounterStore counters, StoreClock measured) implements CounterStore {
  @Override
  public Counts increment(List<CounterUpdate> updates) {
    return counters.increment(updates);
  }

  @Override
  public void decrement(List<CounterUpdate> updates) {
    counters.decrement(updates);
  }

  @Override
  public Optional<StoreClock> clock() {
    return Optional.of(measured);
  }
}
