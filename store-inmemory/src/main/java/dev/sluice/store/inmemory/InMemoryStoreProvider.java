package dev.sluice.store.inmemory;

import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterStoreProvider;
import java.util.Map;
import java.util.Set;

/** {@code in-memory}: optional setting {@code maximumCounters}. */
public final class InMemoryStoreProvider implements CounterStoreProvider {

  @Override
  public String name() {
    return "in-memory";
  }

  @Override
  public Class<? extends CounterStore> type() {
    return InMemoryCounterStore.class;
  }

  @Override
  public Set<String> settings() {
    return Set.of("maximumCounters");
  }

  @Override
  public CounterStore create(Map<String, String> settings) {
    InMemoryCounterStore.Builder b = InMemoryCounterStore.builder();
    String max = settings.get("maximumCounters");
    if (max != null) {
      try {
        b.maximumCounters(Long.parseLong(max.trim()));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("maximumCounters: not a whole number: '" + max + "'");
      }
    }
    return b.build();
  }
}
