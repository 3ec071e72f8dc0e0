package dev.sluice.algorithm;

/**
 * Sliding window, fixed rate (Cloudflare's counter): {@code previous × (1 − f) + current}, with
 * {@code f} the elapsed fraction of the current window. Smooth at window edges.
 */
final class SlidingWindow extends Window {

  private static final double EPSILON = 1e-9;

  /** {@code 1 / period}: a multiplication per decision instead of a division. */
  private final double inversePeriod;

  SlidingWindow(long limit, long periodMillis) {
    super(limit, periodMillis);
    this.inversePeriod = 1.0 / periodMillis;
  }

  @Override
  public long offset(String identity) {
    return 0;
  }

  @Override
  public void evaluate(Count c) {
    double f = (c.now - c.windowStart) * inversePeriod;
    double decayed = c.previous * (1 - f);
    boolean pass = decayed + c.current <= limit + EPSILON;
    long after =
        pass
            ? c.current
            : Math.min(
                c.current - c.permits, Math.max(0, (long) Math.floor(limit - decayed + EPSILON)));
    long windowEnd = c.windowStart + period;
    c.outcome(
        pass,
        (long) Math.ceil(decayed + after - EPSILON),
        after > 0 ? windowEnd + period : c.previous > 0 ? windowEnd : c.now,
        pass ? 0 : retry(limit, after, c.previous, c.permits, c.windowStart, period, c.now),
        after);
  }

  @Override
  public long retryForOne(Count c) {
    return retry(limit, c.settled, c.previous, 1, c.windowStart, period, c.now);
  }

  /**
   * Milliseconds until {@code q} permits fit a sliding window whose current window holds {@code
   * current} and previous {@code previous}, if nothing else arrives: the earliest instant at which
   * {@code previous × (1 − f) + current + q ≤ limit}, looking into the next window when the current
   * one alone is too full.
   */
  static long retry(
      long limit, long current, long previous, long q, long windowStart, long period, long now) {
    if (q > limit) {
      return Count.NEVER;
    }
    long at;
    if (current + q <= limit) {
      if (previous == 0) {
        return 0;
      }
      double f = 1 - (limit - current - q) / (double) previous;
      at = windowStart + (long) Math.ceil(f * period - 1e-7);
    } else {
      // Next window: this one's count becomes the previous, decaying from its start.
      double g = 1 - (limit - q) / (double) current;
      at = windowStart + period + (long) Math.ceil(g * period - 1e-7);
    }
    return Math.max(0, at - now);
  }
}
