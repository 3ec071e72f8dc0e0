package dev.sluice.algorithm;

/**
 * Token bucket, exact, as GCRA (the generic cell rate algorithm): a bucket of {@code burst} tokens
 * refilled at {@code rate} per {@code period}, kept as one number per identity, the theoretical
 * arrival time (TAT) after which the bucket is full again. A request of {@code q} tokens moves the
 * TAT to {@code max(TAT, now) + q × interval} and passes if that is at most {@code now + burst ×
 * interval}; a refused request's move is refunded.
 *
 * <p>The TAT is a running counter in the store ({@link dev.sluice.spi.CounterBatch#floor}), in
 * units of {@code 1/rate} ms since 2020-01-01: a millisecond is {@code rate} units and one token's
 * interval is {@code period} (ms) units, so every step is an exact integer and a store's plain
 * atomic add ({@code incr}) moves it; {@code max(TAT, now)} is the floor. Rates up to {@link
 * #MAX_BUCKET_TOKENS} per period fit in a long for centuries.
 */
final class TokenBucket implements WindowLimit {

  /** 2020-01-01T00:00:00Z: where the TAT counts from. */
  static final long EPOCH_MILLIS = 1_577_836_800_000L;

  private final long rate;
  private final long period;
  private final long burst;
  private final long fill;

  TokenBucket(long rate, long periodMillis, long burst) {
    // Up to this rate the TAT, in units of 1/rate ms since 2020, fits a long until past 2200.
    if (rate > MAX_BUCKET_TOKENS) {
      throw new IllegalArgumentException(
          "a token bucket refills at most " + MAX_BUCKET_TOKENS + " tokens per period: " + rate);
    }
    if (burst > MAX_BUCKET_TOKENS) {
      throw new IllegalArgumentException(
          "a token bucket holds at most " + MAX_BUCKET_TOKENS + " tokens: " + burst);
    }
    this.rate = rate;
    this.period = periodMillis;
    this.burst = burst;
    this.fill = Math.max(1, -Math.floorDiv(-burst * periodMillis, rate));
  }

  /** The bucket's size: the most tokens taken at once. */
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
    return Math.max(1, (nowMillis - EPOCH_MILLIS) * rate);
  }

  @Override
  public long delta(long permits) {
    return permits * period;
  }

  @Override
  public void evaluate(Count c) {
    long q = c.permits * period;
    long ceiling = floor(c.now) + burst * period;
    boolean pass = c.current <= ceiling;
    // Refused requests at the same moment are refunded: the TAT settles at or below the ceiling.
    long settled = pass ? c.current : Math.min(c.current - q, ceiling);
    long left = Math.max(0, Math.min(burst, Math.floorDiv(ceiling - settled, period)));
    long retry = c.permits > burst ? Count.NEVER : at(settled + q - burst * period, c.now) - c.now;
    c.outcome(pass, burst - left, at(settled, c.now), retry, settled);
  }

  @Override
  public long retryForOne(Count c) {
    return at(c.settled + period - burst * period, c.now) - c.now;
  }

  /** The first millisecond at which the floor reaches {@code units}, and not before {@code now}. */
  private long at(long units, long now) {
    return Math.max(now, EPOCH_MILLIS - Math.floorDiv(-units, rate));
  }
}
