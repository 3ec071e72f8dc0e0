package dev.sluice.engine;

import dev.sluice.Tier;
import dev.sluice.algorithm.Count;
import dev.sluice.algorithm.TierLimit;
import dev.sluice.spi.CounterKey;

/**
 * One tier's counter in a decision ({@link Call}): what the store is asked, and what the algorithm
 * made of the answer.
 */
final class Counter {
  Entry entry;
  int tier;
  TierLimit limit;
  long window;
  long windowStart;

  /**
   * Where {@link #window} ends, and the offset it was found for: a decision in the same window for
   * the same offset needs no division.
   */
  long windowEnd = Long.MIN_VALUE;

  long windowOffset;
  long current;
  long previous;
  final Count count = new Count();

  /** The counter's name, for stores that key counters by it; made when first laid out. */
  CounterKey key;

  Tier tier() {
    return entry.policy.tiers[tier];
  }

  /** Finds the window that holds {@code now} for the identity's {@code offset}. */
  void locate(long now, long offset) {
    if (now >= windowStart && now < windowEnd && offset == windowOffset) {
      return;
    }
    long period = limit.periodMillis();
    window = Math.floorDiv(now - offset, period);
    windowStart = window * period + offset;
    windowEnd = windowStart + period;
    windowOffset = offset;
  }
}
