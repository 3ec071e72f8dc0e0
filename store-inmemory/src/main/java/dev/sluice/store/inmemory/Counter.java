package dev.sluice.store.inmemory;

/** The two newest windows of one counter. Guarded by its own monitor. */
final class Counter {

  private long window = Long.MIN_VALUE;
  private long current;
  private long previous;

  /**
   * Adds to {@code w} and writes (count of w, count of w − 1) to {@code out[at]}, {@code
   * out[at+1]}.
   */
  synchronized void add(long w, long delta, long[] out, int at) {
    if (w > window) {
      previous = w == window + 1 ? current : 0;
      current = 0;
      window = w;
    }
    if (w == window) {
      current = saturatedSum(current, delta);
      out[at] = current;
      out[at + 1] = previous;
    } else if (w == window - 1) {
      // A late writer (its clock behind ours) still lands in the window it meant.
      previous = saturatedSum(previous, delta);
      out[at] = previous;
      out[at + 1] = 0;
    } else {
      out[at] = delta;
      out[at + 1] = 0;
    }
  }

  synchronized void subtract(long w, long delta) {
    if (w == window) {
      current = Math.max(0, current - delta);
    } else if (w == window - 1) {
      previous = Math.max(0, previous - delta);
    }
  }

  /** Counts never wrap: past Long.MAX_VALUE they stay there. */
  private static long saturatedSum(long a, long b) {
    long sum = a + b;
    return ((a ^ sum) & (b ^ sum)) < 0 ? Long.MAX_VALUE : sum;
  }
}
