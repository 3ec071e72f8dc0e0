package dev.sluice.spi;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * A store that records which counters each decision counted, as {@code policy:identity} (one entry
 * per counter, whatever its tiers), for tests that assert which rules counted a request and under
 * which identity. Refunds are not recorded. Thread-safe.
 */
public final class RecordingStore implements CounterStore {

  private final CounterStore store;

  private final Set<String> counted = new LinkedHashSet<>();

  /** Over a new {@link ReferenceCounterStore}. */
  public RecordingStore() {
    this(new ReferenceCounterStore());
  }

  /** Over {@code store}, which does the counting. */
  public RecordingStore(CounterStore store) {
    this.store = store;
  }

  @Override
  public Counts increment(List<CounterUpdate> updates) {
    synchronized (counted) {
      for (CounterUpdate u : updates) {
        counted.add(u.policy() + ":" + u.identity());
      }
    }
    return store.increment(updates);
  }

  /** The counters counted since the last call, in the order first counted; clears them. */
  public List<String> take() {
    synchronized (counted) {
      List<String> out = new ArrayList<>(counted);
      counted.clear();
      return out;
    }
  }

  @Override
  public void decrement(List<CounterUpdate> updates) {
    store.decrement(updates);
  }

  @Override
  public java.util.Optional<SharedValues> sharedValues() {
    return store.sharedValues();
  }
}
