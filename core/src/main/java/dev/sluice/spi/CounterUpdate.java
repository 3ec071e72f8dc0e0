package dev.sluice.spi;

import java.util.Objects;

/**
 * One counter change in a batch: add {@code delta} to the count of window {@code window} of the
 * counter named by {@code (policy, identity, periodMillis)}.
 *
 * <p>{@code identity} is caller data and may hold anything (spaces, CR/LF, non-ASCII, 10 KB,
 * empty): a store must keep two different identities apart and must never send one raw to a wire
 * protocol.
 *
 * @param policy the policy: a rule's or a limiter's id; short, chosen by the operator
 * @param identity the client the counter belongs to (API key, user, IP…)
 * @param periodMillis the window length in milliseconds, &gt; 0
 * @param window the window index: {@code floor((nowMillis - offset) / periodMillis)}
 * @param delta how much to add (or, for a decrement, subtract), &gt; 0
 * @param floor 0 for a window counter; for a running counter ({@link CounterBatch#floor}), the
 *     value it never lags behind, &gt; 0
 * @param released whether the counter's windows are given back after they end ({@link
 *     CounterBatch#released})
 * @param ceiling for a running counter, the most it may hold after this change, or {@link
 *     Long#MAX_VALUE} for no bound ({@link CounterBatch#ceiling}: past it the store writes nothing
 *     and reports the value it would have written); ignored for a window counter and a decrement
 */
public record CounterUpdate(
    String policy,
    String identity,
    long periodMillis,
    long window,
    long delta,
    long floor,
    boolean released,
    long ceiling) {

  /** An update of a window counter. */
  public CounterUpdate(String policy, String identity, long periodMillis, long window, long delta) {
    this(policy, identity, periodMillis, window, delta, 0, false, Long.MAX_VALUE);
  }

  /** An update of a window counter (floor 0) or a running counter. */
  public CounterUpdate(
      String policy, String identity, long periodMillis, long window, long delta, long floor) {
    this(policy, identity, periodMillis, window, delta, floor, false, Long.MAX_VALUE);
  }

  /** An update of a window counter or a running counter with no ceiling. */
  public CounterUpdate(
      String policy,
      String identity,
      long periodMillis,
      long window,
      long delta,
      long floor,
      boolean released) {
    this(policy, identity, periodMillis, window, delta, floor, released, Long.MAX_VALUE);
  }

  public CounterUpdate {
    Objects.requireNonNull(policy, "policy");
    Objects.requireNonNull(identity, "identity");
    if (periodMillis <= 0) {
      throw new IllegalArgumentException("periodMillis must be > 0");
    }
    if (delta <= 0) {
      throw new IllegalArgumentException("delta must be > 0");
    }
    if (floor < 0) {
      throw new IllegalArgumentException("floor must be >= 0");
    }
  }

  /** {@return whether this is a running counter (a floor &gt; 0) rather than a window} */
  public boolean running() {
    return floor > 0;
  }
}
