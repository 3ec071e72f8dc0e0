package dev.sluice.micrometer;

import dev.sluice.spi.CounterStore;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.Objects;

/**
 * The counter store's own figures in Micrometer: {@code sluice.store.evictions} (Prometheus: {@code
 * sluice_store_evictions_total}), tagged {@code node}, the counters each node dropped for lack of
 * memory before they expired ({@link CounterStore#evictions()}). An evicted counter starts again
 * from zero, so its client may get up to its limit again in that window: alert on any rise, and
 * give the store more memory. Read when the registry is scraped; the store answers from its last
 * background read, never with a round trip. A store that cannot tell registers nothing.
 *
 * <pre>{@code
 * new StoreMetrics(store).bindTo(registry);
 * }</pre>
 */
public final class StoreMetrics implements MeterBinder {

  private final CounterStore store;

  public StoreMetrics(CounterStore store) {
    this.store = Objects.requireNonNull(store, "store");
  }

  @Override
  public void bindTo(MeterRegistry registry) {
    for (String node : store.evictions().keySet()) {
      FunctionCounter.builder(
              "sluice.store.evictions",
              store,
              s -> s.evictions().getOrDefault(node, 0L).doubleValue())
          .description(
              "Counters the store dropped for lack of memory before they expired; each starts"
                  + " again from zero")
          .tag("node", node)
          .register(registry);
    }
  }
}
