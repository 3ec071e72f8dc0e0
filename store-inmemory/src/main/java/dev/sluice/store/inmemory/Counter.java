package dev.sluice.store.inmemory;

import dev.sluice.spi.CounterBatch;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The two newest windows of one counter, lock-free on the common path: window {@code w} lives in
 * slot {@code w & 1}, labelled with {@code w}. Adding to a window whose slot still holds an older
 * one resets the slot first (under the counter's monitor, rare: once per window); every other add
 * is one atomic add. Counts saturate at {@link Long#MAX_VALUE}.
 *
 * <p>A running counter ({@link CounterBatch#floor}) uses slot 0 alone: its label is the newest
 * window it was written in, for expiry, and its count the running value, moved by compare-and-set.
 */
final class Counter {

  private static final VarHandle SLOTS = MethodHandles.arrayElementVarHandle(long[].class);

  /** {@code [label0, count0, label1, count1]}: each window slot's index and count. */
  private final long[] slots = {Long.MIN_VALUE, 0, Long.MIN_VALUE, 0};

  /**
   * Adds to window {@code w} and reports (count of w, count of w − 1). A window older than the two
   * newest counts as forgotten: the add is dropped and reported as if alone.
   */
  void add(long w, long delta, CounterBatch out, int i) {
    int at = (int) (w & 1) << 1;
    while (true) {
      long label = (long) SLOTS.getVolatile(slots, at);
      if (label == w) {
        long before = (long) SLOTS.getAndAdd(slots, at + 1, delta);
        long sum = before + delta;
        if (((before ^ sum) & (delta ^ sum)) < 0 || before < 0) {
          // Past Long.MAX_VALUE: stay there.
          SLOTS.setVolatile(slots, at + 1, Long.MAX_VALUE);
          sum = Long.MAX_VALUE;
        }
        out.counted(i, sum, count(w - 1));
        return;
      }
      if (label > w) {
        out.counted(i, delta, 0);
        return;
      }
      reset(at, w);
    }
  }

  /**
   * Raises the running value to {@code floor} if it is below, adds {@code delta}, and reports (new
   * value, 0); marks it written in window {@code w}.
   */
  void raise(long w, long floor, long delta, CounterBatch out, int i) {
    long v;
    long next;
    do {
      v = (long) SLOTS.getVolatile(slots, 1);
      long from = Math.max(v, floor);
      next = from > Long.MAX_VALUE - delta ? Long.MAX_VALUE : from + delta;
    } while (!SLOTS.compareAndSet(slots, 1, v, next));
    long label;
    while ((label = (long) SLOTS.getVolatile(slots, 0)) < w
        && !SLOTS.compareAndSet(slots, 0, label, w)) {
      // Another writer moved the label; look again.
    }
    out.counted(i, next, 0);
  }

  /** Subtracts from the running value (never below 0). */
  void lower(long delta) {
    long c;
    do {
      c = (long) SLOTS.getVolatile(slots, 1);
    } while (!SLOTS.compareAndSet(slots, 1, c, Math.max(0, c - delta)));
  }

  /** Puts window {@code w} in its slot with count 0, unless a writer already has. */
  private synchronized void reset(int at, long w) {
    if ((long) SLOTS.getVolatile(slots, at) < w) {
      // The count first: a writer that sees the new label must see the count it starts from.
      SLOTS.setVolatile(slots, at + 1, 0L);
      SLOTS.setVolatile(slots, at, w);
    }
  }

  /** The count of window {@code w}, or 0 if its slot holds another window. */
  private long count(long w) {
    int at = (int) (w & 1) << 1;
    long count = (long) SLOTS.getVolatile(slots, at + 1);
    return (long) SLOTS.getVolatile(slots, at) == w ? count : 0;
  }

  /** Subtracts from window {@code w} (never below 0); a forgotten window stays forgotten. */
  void subtract(long w, long delta) {
    int at = (int) (w & 1) << 1;
    while ((long) SLOTS.getVolatile(slots, at) == w) {
      long c = (long) SLOTS.getVolatile(slots, at + 1);
      if (SLOTS.compareAndSet(slots, at + 1, c, Math.max(0, c - delta))) {
        return;
      }
    }
  }

  /** The newest window this counter holds. */
  long newestWindow() {
    return Math.max((long) SLOTS.getVolatile(slots, 0), (long) SLOTS.getVolatile(slots, 2));
  }
}
