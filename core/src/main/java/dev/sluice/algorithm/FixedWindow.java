package dev.sluice.algorithm;

/** Fixed window: at most {@code limit} per window, counted from the window boundary. */
final class FixedWindow extends Window {

  private final boolean staggered;

  FixedWindow(long limit, long periodMillis, boolean staggered) {
    super(limit, periodMillis);
    this.staggered = staggered;
  }

  @Override
  public long offset(String identity) {
    if (!staggered) {
      return 0;
    }
    long h = identity.hashCode() * 0x9E3779B97F4A7C15L;
    return Math.floorMod(h ^ (h >>> 32), period);
  }

  @Override
  public void evaluate(Count c) {
    boolean pass = c.current <= limit;
    long used = pass ? c.current : Math.min(c.current - c.permits, limit);
    long windowEnd = c.windowStart + period;
    c.outcome(pass, used, windowEnd, retry(limit, used, c.permits, windowEnd, c.now), used);
  }

  @Override
  public long retryForOne(Count c) {
    return retry(limit, c.settled, 1, c.windowStart + period, c.now);
  }

  /** Milliseconds until {@code q} permits fit a fixed window now holding {@code current}. */
  static long retry(long limit, long current, long q, long windowEnd, long now) {
    if (q > limit) {
      return Count.NEVER;
    }
    return current + q <= limit ? 0 : windowEnd - now;
  }
}
