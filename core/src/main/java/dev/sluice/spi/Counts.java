package dev.sluice.spi;

import java.util.Arrays;

/**
 * A store's answer to {@link CounterStore#increment(java.util.List)}: for each update, by its index
 * in the list, the new count of its window ({@link #current}) and the count of the window before it
 * ({@link #previous}). Immutable and thread-safe.
 *
 * <p>For a window counter, {@code current(i)} is the count of window {@code w} after update {@code
 * i}'s delta was added, and {@code previous(i)} the count of window {@code w - 1}, 0 for a window
 * the store never saw or has forgotten. For a running counter ({@link CounterUpdate#floor} &gt; 0),
 * {@code current(i)} is {@code max(stored, floor) + delta}, reported whether or not it was written
 * (it was not when it is over the update's {@link CounterUpdate#ceiling}), and {@code previous(i)}
 * is 0.
 */
public final class Counts {

  private static final Counts NONE = new Counts(new long[0]);

  private final long[] pairs;

  private Counts(long[] pairs) {
    this.pairs = pairs;
  }

  /**
   * The counts of {@code pairs.length / 2} updates: update {@code i}'s current count at {@code
   * pairs[2i]} and its previous window's count at {@code pairs[2i + 1]}. The array is copied.
   *
   * @param pairs current and previous counts, in pairs
   * @return the counts
   * @throws IllegalArgumentException if {@code pairs} has an odd length
   */
  public static Counts of(long... pairs) {
    if (pairs.length % 2 != 0) {
      throw new IllegalArgumentException("counts come in pairs, got " + pairs.length);
    }
    return pairs.length == 0 ? NONE : new Counts(pairs.clone());
  }

  /** {@return how many updates this answers: indexes run from 0 to {@code size() - 1}} */
  public int size() {
    return pairs.length / 2;
  }

  /**
   * {@return update {@code i}'s new count: its window's, or a running counter's value}
   *
   * @param i the update's index in the list the store was given
   * @throws IndexOutOfBoundsException if {@code i} is not below {@link #size}
   */
  public long current(int i) {
    return pairs[2 * checked(i)];
  }

  /**
   * {@return the count of update {@code i}'s previous window ({@code window - 1}); 0 for a running
   * counter or a window the store does not hold}
   *
   * @param i the update's index in the list the store was given
   * @throws IndexOutOfBoundsException if {@code i} is not below {@link #size}
   */
  public long previous(int i) {
    return pairs[2 * checked(i) + 1];
  }

  private int checked(int i) {
    if (i < 0 || i >= size()) {
      throw new IndexOutOfBoundsException("index " + i + " of " + size() + " counts");
    }
    return i;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Counts other && Arrays.equals(pairs, other.pairs);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(pairs);
  }

  /** {@return the counts as {@code [current/previous, ...]}, for messages} */
  @Override
  public String toString() {
    StringBuilder s = new StringBuilder("[");
    for (int i = 0; i < size(); i++) {
      if (i > 0) {
        s.append(", ");
      }
      s.append(current(i)).append('/').append(previous(i));
    }
    return s.append(']').toString();
  }
}
