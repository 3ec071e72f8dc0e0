package dev.sluice.engine;

import dev.sluice.spi.CounterBatch;

/**
 * A batch whose counters may be counted in two layers ({@link TwoLayer}); the engine's own. Public
 * only for the two-layer module; not part of the API.
 */
public interface TwoLayerBatch extends CounterBatch {

  /**
   * How often, in milliseconds, counter {@code i} is synced with the shared store, or 0 when every
   * decision goes to the store.
   */
  long syncMillis(int i);

  /**
   * How much one instance may count in a window on its own while the shared store is down, before
   * the limit's store-failure setting applies. Unlimited by default.
   */
  default long localAllowance(int i) {
    return Long.MAX_VALUE;
  }
}
