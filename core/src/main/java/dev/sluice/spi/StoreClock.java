package dev.sluice.spi;

/**
 * A store's own clock, which every instance of a fleet reads so that they agree on one time: window
 * numbers and running counters' floors are computed from time, and hosts disagree about it. A store
 * that offers one ({@link CounterStore#clock()}) measures its clock against this host's in the
 * background; a limiter on the store then decides on this host's clock plus {@link
 * #offsetMillis()}, unless it was given a clock of its own.
 *
 * <p>Thread-safe; both methods are read on every decision and must not block.
 */
public interface StoreClock {

  /**
   * The store's time minus this host's, in milliseconds, as last measured; 0 before the first
   * measurement.
   */
  long offsetMillis();

  /**
   * How far the last measurement may be off, in milliseconds (half the interval it placed the
   * store's clock in); -1 before the first measurement.
   */
  long errorMillis();
}
