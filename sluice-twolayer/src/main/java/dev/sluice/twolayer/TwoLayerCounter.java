package dev.sluice.twolayer;

import dev.sluice.spi.CounterKey;

/**
 * One counter of a {@link TwoLayerStore}: its local state for the current and the previous window.
 * Every field is guarded by its monitor.
 */
final class TwoLayerCounter {
  final CounterKey key;
  long syncMillis;
  long window = Long.MIN_VALUE;

  /** The fleet's count of {@code window} as last read (this instance's pushed deltas in it). */
  long shared;

  /** Counted here in {@code window} and not pushed yet; negative after refunds. */
  long unsynced;

  /** Being pushed for {@code window}. */
  long inflight;

  /** Counted here in {@code window}, for the local allowance. */
  long own;

  /** The fleet's count of {@code window - 1}, as best known (this instance's deltas in it). */
  long previous;

  /** Counted here in {@code window - 1} and not pushed yet; negative after refunds. */
  long oldUnsynced;

  /** When {@code window} was last pushed (clock millis); MIN_VALUE for not yet. */
  long lastSync = Long.MIN_VALUE;

  boolean queued;

  /** Swept from the map; a request that still holds it looks again. */
  boolean gone;

  TwoLayerCounter(CounterKey key) {
    this.key = key;
  }

  /**
   * When this counter is next due to be pushed: at once when {@code window} has not been pushed
   * yet, else an interval after its last push.
   */
  long dueAt() {
    return lastSync == Long.MIN_VALUE ? Long.MIN_VALUE : lastSync + syncMillis;
  }

  void roll(long w) {
    if (window != Long.MIN_VALUE && w == window + 1) {
      previous = shared + inflight + unsynced;
      oldUnsynced = unsynced;
    } else {
      previous = 0;
      oldUnsynced = 0;
    }
    window = w;
    shared = 0;
    unsynced = 0;
    inflight = 0;
    own = 0;
    lastSync = Long.MIN_VALUE;
  }
}
