package dev.sluice.twolayer;

import dev.sluice.engine.TwoLayer;
import dev.sluice.spi.CounterStore;
import java.time.InstantSource;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;

/** The engine's two-layer counting, as a service: a {@code TwoLayerStore} per engine. */
public final class TwoLayerProvider implements TwoLayer.Provider {

  @Override
  public TwoLayer over(
      CounterStore shared, InstantSource clock, Optional<ScheduledExecutorService> scheduler) {
    return new TwoLayerStore(shared, clock, TwoLayerStore.MAX_COUNTERS, scheduler);
  }
}
