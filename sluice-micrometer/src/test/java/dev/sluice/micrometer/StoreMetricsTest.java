package dev.sluice.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterUpdate;
import dev.sluice.spi.Counts;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class StoreMetricsTest {

  /** A store whose evictions the test sets. */
  private static final class Evicting implements CounterStore {
    final Map<String, Long> evictions = new LinkedHashMap<>();

    @Override
    public Counts increment(List<CounterUpdate> updates) {
      return Counts.of(new long[2 * updates.size()]);
    }

    @Override
    public void decrement(List<CounterUpdate> updates) {}

    @Override
    public Map<String, Long> evictions() {
      return Map.copyOf(evictions);
    }
  }

  @Test
  void eachNodesEvictionsAreACounterReadWhenScraped() {
    Evicting store = new Evicting();
    store.evictions.put("10.0.0.1:11211", 0L);
    store.evictions.put("10.0.0.2:11211", 0L);
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    new StoreMetrics(store).bindTo(registry);
    FunctionCounter one =
        registry.find("sluice.store.evictions").tag("node", "10.0.0.1:11211").functionCounter();
    assertEquals(0, one.count());
    store.evictions.put("10.0.0.1:11211", 149_081L);
    assertEquals(149_081, one.count());
    assertEquals(
        0,
        registry
            .find("sluice.store.evictions")
            .tag("node", "10.0.0.2:11211")
            .functionCounter()
            .count());
  }

  @Test
  void aStoreThatCannotTellRegistersNothing() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    CounterStore plain =
        new CounterStore() {
          @Override
          public Counts increment(List<CounterUpdate> updates) {
            return Counts.of(new long[2 * updates.size()]);
          }

          @Override
          public void decrement(List<CounterUpdate> updates) {}
        };
    new StoreMetrics(plain).bindTo(registry);
    assertTrue(registry.getMeters().isEmpty());
  }
}
