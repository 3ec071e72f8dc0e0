package dev.sluice.spi;

import java.util.ArrayList;
import java.util.List;

/**
 * The counters of one decision, as a store reads them without anything allocated per call: the same
 * data as a list of {@link CounterUpdate}s, by index. A batch is reused by one thread at a time; a
 * store must not keep it past the call.
 */
public interface CounterBatch {

  /** {@return how many counters: indexes run from 0 to {@code size() - 1}} */
  int size();

  /**
   * {@return counter {@code i}'s policy, a rule's or a limiter's id ({@link CounterUpdate#policy})}
   *
   * @param i the counter's index
   */
  String policy(int i);

  /**
   * {@return counter {@code i}'s identity ({@link CounterUpdate#identity}); any string}
   *
   * @param i the counter's index
   */
  String identity(int i);

  /**
   * {@return counter {@code i}'s window length in milliseconds, &gt; 0}
   *
   * @param i the counter's index
   */
  long periodMillis(int i);

  /**
   * {@return counter {@code i}'s window index}
   *
   * @param i the counter's index
   */
  long window(int i);

  /**
   * {@return how much to add to counter {@code i}, &gt; 0}
   *
   * @param i the counter's index
   */
  long delta(int i);

  /**
   * 0 (the default) for a window counter. Otherwise counter {@code i} is a running counter that
   * never lags behind this floor, which the caller raises with time: the store adds the delta to
   * {@code max(stored, floor)}, a counter it does not hold starting at the floor. A running counter
   * is one value, not a series of windows: its name is {@code (policy, identity, periodMillis)}
   * whatever the window, {@link #window} only says when it was last written (the store may forget
   * it once the window after next has begun), and its previous count is reported as 0.
   *
   * <p>The floor is a time: nanoseconds since 2020-01-01T00:00:00Z on the caller's clock (a token
   * bucket's earliest arrival time, now). A store with a clock of its own may move the floor and
   * the {@link #ceiling} onto it by the same amount, and report the value moved back into the
   * caller's frame, so that callers whose clocks disagree share one counter exactly.
   *
   * @param i the counter's index
   * @return the floor, or 0 for a window counter
   */
  default long floor(int i) {
    return 0;
  }

  /**
   * The most a running counter ({@link #floor} &gt; 0) may hold after this change; ignored for a
   * window counter. The store computes {@code v = max(stored, floor) + delta}, {@code stored} being
   * the floor for a counter it does not hold. If {@code v <= ceiling} it stores {@code v},
   * atomically with the read of {@code stored} (no other change to the counter comes between), and
   * reports {@code v}; otherwise it writes nothing (the counter keeps its value, and is not raised
   * to the floor) and reports {@code v} all the same, so the caller sees {@code v > ceiling}:
   * refused, with nothing to give back for that counter. Every counter of a batch is judged on its
   * own. {@link Long#MAX_VALUE} (the default) adds unconditionally. (Core composes its token bucket
   * from this primitive, once for every store; the store knows only the arithmetic.)
   *
   * @param i the counter's index
   * @return the ceiling, {@link Long#MAX_VALUE} for none
   */
  default long ceiling(int i) {
    return Long.MAX_VALUE;
  }

  /**
   * Whether counter {@code i}'s windows are given back after they end: a caller may {@link
   * CounterStore#decrement} a window it counted in at any later time. The count of such a window
   * can fall after it has ended, so a store reads the previous window with every increment and
   * never answers it from a copy it remembers. False by default.
   *
   * @param i the counter's index
   * @return whether its windows are given back after they end
   */
  default boolean released(int i) {
    return false;
  }

  /**
   * Counter {@code i}'s name as a map key: a new key by default. A batch may hand out the same
   * object for {@code i} until its counters change; a store that keeps a key keeps a {@link
   * CounterKey#copy}.
   *
   * @param i the counter's index
   * @return its name, valid until the batch's counters change
   */
  default CounterKey key(int i) {
    return new CounterKey().set(policy(i), identity(i), periodMillis(i));
  }

  /**
   * The store's answer for counter {@code i}.
   *
   * @param i the counter's index
   * @param current the window's new count
   * @param previous the previous window's count (0 for a running counter)
   */
  void counted(int i, long current, long previous);

  /** {@return the batch as new updates, for a store that has no allocation-free path} */
  default List<CounterUpdate> updates() {
    int n = size();
    List<CounterUpdate> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(update(i));
    }
    return out;
  }

  /**
   * Counter {@code i} as a new update.
   *
   * @param i the counter's index
   * @return its policy, identity, window, delta, floor, ceiling and whether it is released
   */
  default CounterUpdate update(int i) {
    return new CounterUpdate(
        policy(i),
        identity(i),
        periodMillis(i),
        window(i),
        delta(i),
        floor(i),
        released(i),
        ceiling(i));
  }

  /**
   * The updates as a batch, for a store whose list path is its batch path: each counter read from
   * {@code updates.get(i)}, {@link #updates} the list itself, and counter {@code i}'s counts
   * written to {@code counts[2i]} (current) and {@code counts[2i + 1]} (previous), as {@link
   * Counts#of} reads them.
   *
   * @param updates the counters
   * @param counts where their counts go, {@code 2 × updates.size()} long
   * @return a batch over both, for one call
   */
  static CounterBatch of(List<CounterUpdate> updates, long[] counts) {
    if (counts.length != 2 * updates.size()) {
      throw new IllegalArgumentException(
          counts.length + " counts for " + updates.size() + " updates: two a counter");
    }
    return new ListBatch(updates, counts);
  }
}
