package dev.sluice.spi;

import java.time.InstantSource;

/**
 * A store's own clock, which every instance of a fleet reads so that they agree on one time: window
 * numbers and running counters' floors are computed from time, and hosts disagree about it. A store
 * that offers one ({@link CounterStore#clock()}) measures it in the background; a limiter on the
 * store then decides on {@link #millis}, unless it was given a clock of its own.
 *
 * <p>Thread-safe; every method is read on every decision and must not block.
 */
public interface StoreClock {

  /**
   * The store's time minus this host's, in milliseconds, as last measured; 0 before the first
   * measurement. A step of this host's clock shows here at the next measurement.
   */
  long offsetMillis();

  /**
   * How far the last measurement may be off, in milliseconds (half the interval it placed the
   * store's clock in); -1 before the first measurement.
   */
  long errorMillis();

  /**
   * The store's time now, in milliseconds since the epoch, which limiters decide on. A store's
   * clock advances the instant it last measured on a monotonic clock ({@link System#nanoTime}), so
   * a step of this host's clock (NTP setting it, an operator) does not move it; the next
   * measurement corrects what the two drifted apart. Before the first measurement it reads {@code
   * host}. The default, for a clock that keeps no instant of its own, is {@code host}'s time plus
   * {@link #offsetMillis}, which a step of {@code host} moves until the next measurement.
   *
   * @param host this host's clock
   * @return the store's time now, in milliseconds since the epoch
   */
  default long millis(InstantSource host) {
    return host.millis() + offsetMillis();
  }
}
