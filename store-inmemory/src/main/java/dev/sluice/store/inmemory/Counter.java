package dev.sluice.store.inmemory;

import dev.sluice.spi.CounterBatch;
import dev.sluice.spi.CounterKey;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The two newest windows of one counter, and the counter's name: the store keeps each counter as
 * its own key, so a lookup reaches the counts without another object. Lock-free on the common path:
 * window {@code w} lives in slot {@code w & 1}, labelled with {@code w}. Adding to a window whose
 * slot still holds an older one resets the slot first (under the counter's monitor, rare: once per
 * window); every other add is one atomic add. Counts saturate at {@link Long#MAX_VALUE} and stay
 * there until their window ends: a refund never lowers a saturated count.
 *
 * <p>A running counter ({@link CounterBatch#floor}) uses slot 0 alone: its label is the newest
 * window it was written in, for expiry, and its count the running value, moved by compare-and-set.
 */
final class Counter extends CounterKey {

  private static final VarHandle LABEL0;
  private static final VarHandle COUNT0;
  private static final VarHandle LABEL1;
  private static final VarHandle COUNT1;

  static {
    try {
      MethodHandles.Lookup l = MethodHandles.lookup();
      LABEL0 = l.findVarHandle(Counter.class, "label0", long.class);
      COUNT0 = l.findVarHandle(Counter.class, "count0", long.class);
      LABEL1 = l.findVarHandle(Counter.class, "label1", long.class);
      COUNT1 = l.findVarHandle(Counter.class, "count1", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  // Each window slot's index and count; written through the handles above.
  @SuppressWarnings("UnusedVariable")
  private long label0 = Long.MIN_VALUE;

  @SuppressWarnings("UnusedVariable")
  private long count0;

  @SuppressWarnings("UnusedVariable")
  private long label1 = Long.MIN_VALUE;

  @SuppressWarnings("UnusedVariable")
  private long count1;

  /** The store that holds this counter. */
  final InMemoryCounterStore owner;

  /**
   * Whether this counter counts concurrency slots ({@link CounterBatch#released}): requests in
   * flight, each given back when it completes. Such a counter is never evicted while it holds one.
   */
  final boolean slots;

  /**
   * Set once the store has dropped the counter (expired or evicted), or from the start for a
   * counter the table could not hold ({@link #unstored}). A remover sets it before its last look at
   * the counter's count, and a writer of slots looks at it after its add, so at least one of them
   * sees the other: a slot is never counted in a counter that is gone.
   */
  volatile boolean removed;

  /** Made for one decision and never stored: its part of the table held only slots in use. */
  final boolean unstored;

  /** A window counter of {@code owner}'s named as {@code name}, holding no window yet. */
  Counter(InMemoryCounterStore owner, CounterKey name) {
    this(owner, name, false, false);
  }

  /**
   * A counter of {@code owner}'s named as {@code name}, holding no window yet; of concurrency slots
   * if {@code slots}, and never stored if {@code unstored}.
   */
  Counter(InMemoryCounterStore owner, CounterKey name, boolean slots, boolean unstored) {
    super(name);
    this.owner = owner;
    this.slots = slots;
    this.unstored = unstored;
    this.removed = unstored;
  }

  // Slot s (0 or 1) through constant handles, so that each access compiles to one instruction.

  private long label(int s) {
    return s == 0 ? (long) LABEL0.getVolatile(this) : (long) LABEL1.getVolatile(this);
  }

  private void setLabel(int s, long w) {
    if (s == 0) {
      LABEL0.setVolatile(this, w);
    } else {
      LABEL1.setVolatile(this, w);
    }
  }

  private long countOf(int s) {
    return s == 0 ? (long) COUNT0.getVolatile(this) : (long) COUNT1.getVolatile(this);
  }

  private void setCount(int s, long c) {
    if (s == 0) {
      COUNT0.setVolatile(this, c);
    } else {
      COUNT1.setVolatile(this, c);
    }
  }

  private long getAndAddCount(int s, long delta) {
    return s == 0 ? (long) COUNT0.getAndAdd(this, delta) : (long) COUNT1.getAndAdd(this, delta);
  }

  private boolean casCount(int s, long expected, long c) {
    return s == 0
        ? COUNT0.compareAndSet(this, expected, c)
        : COUNT1.compareAndSet(this, expected, c);
  }

  private static int slot(long w) {
    return (int) (w & 1);
  }

  /**
   * Adds to window {@code w} and reports (count of w, count of w − 1). A window older than the two
   * newest counts as forgotten: the add is dropped and reported as if alone.
   */
  void add(long w, long delta, CounterBatch out, int i) {
    int s = slot(w);
    while (true) {
      long l = label(s);
      if (l == w) {
        long before = getAndAddCount(s, delta);
        long sum = before + delta;
        if (((before ^ sum) & (delta ^ sum)) < 0 || before < 0) {
          // Past Long.MAX_VALUE: stay there.
          setCount(s, Long.MAX_VALUE);
          sum = Long.MAX_VALUE;
        }
        out.counted(i, sum, count(w - 1));
        return;
      }
      if (l > w) {
        out.counted(i, delta, 0);
        return;
      }
      reset(s, w);
    }
  }

  /**
   * Raises the running value to {@code floor} if it is below and adds {@code delta}; keeps the
   * result when it is at most {@code ceiling} (and marks the counter written in window {@code w}),
   * else leaves the value as it was. Reports (result, 0) either way.
   */
  void raise(long w, long floor, long delta, long ceiling, CounterBatch out, int i) {
    long v;
    long next;
    do {
      v = (long) COUNT0.getVolatile(this);
      long from = Math.max(v, floor);
      next = from > Long.MAX_VALUE - delta ? Long.MAX_VALUE : from + delta;
      if (next > ceiling) {
        out.counted(i, next, 0);
        return;
      }
    } while (!COUNT0.compareAndSet(this, v, next));
    long label;
    while ((label = (long) LABEL0.getVolatile(this)) < w && !LABEL0.compareAndSet(this, label, w)) {
      // Another writer moved the label; look again.
    }
    out.counted(i, next, 0);
  }

  /**
   * Subtracts from the running value (never below 0). A value pinned at {@link Long#MAX_VALUE}
   * stays there: what it would hold past that is unknown, so no refund may lower it.
   */
  void lower(long delta) {
    long c;
    do {
      c = (long) COUNT0.getVolatile(this);
    } while (c != Long.MAX_VALUE && !COUNT0.compareAndSet(this, c, Math.max(0, c - delta)));
  }

  /** Puts window {@code w} in its slot with count 0, unless a writer already has. */
  private synchronized void reset(int s, long w) {
    if (label(s) < w) {
      // The count first: a writer that sees the new label must see the count it starts from.
      setCount(s, 0);
      setLabel(s, w);
    }
  }

  /** The count of window {@code w}, or 0 if its slot holds another window. */
  private long count(long w) {
    int s = slot(w);
    long count = countOf(s);
    return label(s) == w ? count : 0;
  }

  /**
   * Subtracts from window {@code w} (never below 0); a forgotten window stays forgotten, and a
   * count pinned at {@link Long#MAX_VALUE} stays pinned for the rest of its window: what it would
   * hold past that is unknown, so a refund may not lower it (the window only refuses, never admits
   * past its limit).
   */
  void subtract(long w, long delta) {
    int s = slot(w);
    while (label(s) == w) {
      long c = countOf(s);
      if (c == Long.MAX_VALUE || casCount(s, c, Math.max(0, c - delta))) {
        return;
      }
    }
  }

  /**
   * Whether no one can ask for this counter any more at {@code now}: its newest window is neither
   * current nor the previous of a current one, whatever the identity's window offset. A counter
   * that holds no window yet was just created and its first add is on its way: dropping it would
   * let that add and a concurrent one land in two counters.
   */
  boolean expired(long now) {
    long newest = Math.max(label(0), label(1));
    return newest != Long.MIN_VALUE
        && Math.floorDiv(now, periodMillis())
            >= (newest > Long.MAX_VALUE - 3 ? Long.MAX_VALUE : newest + 3);
  }

  /**
   * Whether this is a counter of slots with a request in flight at {@code now} (a slot in its
   * current or previous window), or one just created whose first slot is on its way: never evicted.
   */
  boolean holdsSlots(long now) {
    return slots && weight(now) > 0;
  }

  /**
   * Marks this counter removed unless it holds slots at {@code now}; returns whether it did. The
   * mark comes before the look at the count, so a slot taken concurrently either is seen here (and
   * the counter stays) or sees the mark (and is counted again in the table's counter).
   */
  boolean retire(long now) {
    removed = true;
    if (holdsSlots(now)) {
      removed = false;
      return false;
    }
    return true;
  }

  /**
   * What keeping this counter is worth, to pick one to evict: its count in its two newest windows
   * (a running counter's value), 0 once it was last counted two or more periods before {@code now},
   * the most for a counter that was just created and is about to be counted.
   */
  long weight(long now) {
    long l0 = label(0);
    long l1 = label(1);
    long newest = Math.max(l0, l1);
    if (newest == Long.MIN_VALUE) {
      return Long.MAX_VALUE;
    }
    if (newest < Math.floorDiv(now, periodMillis()) - 1) {
      return 0;
    }
    long w = (l0 >= newest - 1 ? countOf(0) : 0) + (l1 >= newest - 1 ? countOf(1) : 0);
    return w < 0 ? Long.MAX_VALUE : w;
  }
}
