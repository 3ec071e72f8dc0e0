package dev.sluice.engine;

import dev.sluice.DecisionListener;
import dev.sluice.spi.StoreClock;
import java.time.Instant;
import java.time.InstantSource;

/**
 * The store's clock ({@link StoreClock#millis}), so that every instance of a fleet computes windows
 * and arrival times on one clock, which a step of this host's clock does not move. Tells the
 * listener when the measured offset changes. Thread-safe.
 */
final class FleetClock implements InstantSource {

  private final InstantSource local;
  private final StoreClock store;
  private final DecisionListener listener;

  /** The offset the listener was last told of; it only decides whether to tell again. */
  private volatile long told;

  FleetClock(InstantSource local, StoreClock store, DecisionListener listener) {
    this.local = local;
    this.store = store;
    this.listener = listener;
  }

  @Override
  public long millis() {
    long offset = store.offsetMillis();
    if (offset != told) {
      told = offset;
      try {
        listener.onClockOffset(offset, store.errorMillis());
      } catch (RuntimeException e) {
        // A listener must not fail a decision.
      }
    }
    return store.millis(local);
  }

  @Override
  public Instant instant() {
    return Instant.ofEpochMilli(millis());
  }

  @Override
  public String toString() {
    return "the store's clock (" + store + ", this host's " + local + ")";
  }
}
