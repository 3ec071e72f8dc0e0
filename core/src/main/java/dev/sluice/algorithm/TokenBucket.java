package dev.sluice.algorithm;

/**
 * Token bucket as GCRA (the generic cell rate algorithm): a bucket of {@code burst} tokens refilled
 * at {@code rate} per {@code period}, kept as one number per identity, the theoretical arrival time
 * (TAT) after which the bucket is full again. A request of {@code q} tokens moves the TAT to {@code
 * max(TAT, now) + q × interval} and passes if that is at most {@code now + burst × interval}, the
 * ceiling: the store writes the move only then ({@link dev.sluice.spi.CounterBatch#ceiling}), so a
 * refused request leaves the TAT where it was and has nothing to refund. The TAT moves only by
 * admitted requests, atomically in the store: exact GCRA across a fleet.
 *
 * <p>The TAT is a running counter in the store ({@link dev.sluice.spi.CounterBatch#floor}), in
 * nanoseconds since 2020-01-01, whatever the rate: a change of rate or burst (a knob, a quota, a
 * rules edit) keeps every bucket's level. One token's interval is {@code period ÷ rate} rounded
 * down to the nanosecond, so a bucket refills at most one nanosecond per token early; on
 * millisecond clocks that is exact for any rate that divides a period into whole nanoseconds.
 * {@code max(TAT, now)} is the floor.
 */
final class TokenBucket implements TierLimit {

  /** 2020-01-01T00:00:00Z: where the TAT counts from. */
  static final long EPOCH_MILLIS = 1_577_836_800_000L;

  static final long NANOS_PER_MILLI = 1_000_000;

  /** The longest a bucket may take to fill from empty: 100 years, so the TAT fits a long. */
  static final long MAX_FILL_MILLIS = 100L * 366 * 24 * 3600 * 1000;

  private final long burst;
  private final long interval;
  private final long fill;

  TokenBucket(long rate, long periodMillis, long burst) {
    if (rate > MAX_BUCKET_TOKENS) {
      throw new IllegalArgumentException(
          "a token bucket refills at most " + MAX_BUCKET_TOKENS + " tokens per period: " + rate);
    }
    if (burst > MAX_BUCKET_TOKENS) {
      throw new IllegalArgumentException(
          "a token bucket holds at most " + MAX_BUCKET_TOKENS + " tokens: " + burst);
    }
    if (rate <= 0 || burst <= 0 || periodMillis <= 0) {
      throw new IllegalArgumentException("rate, burst and period must be > 0");
    }
    if ((double) burst * periodMillis / rate > MAX_FILL_MILLIS) {
      throw new IllegalArgumentException(
          "a token bucket must fill within 100 years: burst × period ÷ rate is too long");
    }
    this.burst = burst;
    this.interval = Math.max(1, periodMillis * NANOS_PER_MILLI / rate);
    this.fill = Math.max(1, -Math.floorDiv(-burst * interval, NANOS_PER_MILLI));
  }

  /** {@return the bucket's size: the most tokens taken at once} */
  @Override
  public long limit() {
    return burst;
  }

  /**
   * How long an empty bucket takes to fill: once its TAT is that far behind its last write, a
   * bucket is full and the store may forget it (a bucket it does not hold starts full).
   */
  @Override
  public long periodMillis() {
    return fill;
  }

  @Override
  public long offset(String identity) {
    return 0;
  }

  @Override
  public long floor(long nowMillis) {
    // Never 0 (0 marks a window counter), even before the epoch.
    return Math.max(1, (nowMillis - EPOCH_MILLIS) * NANOS_PER_MILLI);
  }

  @Override
  public long ceiling(long nowMillis) {
    return floor(nowMillis) + burst * interval;
  }

  @Override
  public boolean refusedUnwritten() {
    return true;
  }

  @Override
  public long delta(long permits) {
    return permits * interval;
  }

  @Override
  public void evaluate(Count c) {
    long q = c.permits * interval;
    long ceiling = ceiling(c.now);
    boolean pass = c.current <= ceiling;
    // A refused move was not written: the TAT stays at what the store held (raised to the floor).
    long settled = pass ? c.current : Math.min(c.current - q, ceiling);
    long left = Math.max(0, Math.min(burst, Math.floorDiv(ceiling - settled, interval)));
    long retry =
        c.permits > burst ? Count.NEVER : at(settled + q - burst * interval, c.now) - c.now;
    c.outcome(pass, burst - left, at(settled, c.now), retry, settled);
  }

  @Override
  public long retryForOne(Count c) {
    return at(c.settled + interval - burst * interval, c.now) - c.now;
  }

  /** The first millisecond at which the floor reaches {@code nanos}, and not before {@code now}. */
  private static long at(long nanos, long now) {
    return Math.max(now, EPOCH_MILLIS - Math.floorDiv(-nanos, NANOS_PER_MILLI));
  }
}
