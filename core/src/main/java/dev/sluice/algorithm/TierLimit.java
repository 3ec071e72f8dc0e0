package dev.sluice.algorithm;

/**
 * One tier under one algorithm: at most {@link #limit()} permits per {@link #periodMillis()}. Given
 * the counts the store reported for a window and the one before it, it decides whether a request
 * passes and fills in what a client is told. Immutable and thread-safe.
 */
public interface TierLimit {

  /** A sliding-window, fixed-rate limit: {@code previous × (1 − f) + current ≤ limit}. */
  static TierLimit sliding(long limit, long periodMillis) {
    return new SlidingWindow(limit, periodMillis);
  }

  /**
   * A fixed-window limit; {@code staggered} shifts each identity's window boundary by a hash of the
   * identity, so clients do not all reset at once.
   */
  static TierLimit fixed(long limit, long periodMillis, boolean staggered) {
    return new FixedWindow(limit, periodMillis, staggered);
  }

  /**
   * At most {@code limit} requests in flight at once per identity; a slot lives at most two periods
   * if it is never given back.
   */
  static TierLimit concurrent(long limit, long slotTtlMillis) {
    return new ConcurrentRequests(limit, slotTtlMillis);
  }

  /**
   * The most tokens a token bucket holds, and refills per period: 10<sup>6</sup>. Defined here,
   * where the bucket is counted, so this package reads nothing of the API's.
   */
  long MAX_BUCKET_TOKENS = 1_000_000;

  /**
   * A token bucket of {@code burst} tokens refilled at {@code rate} per {@code periodMillis}, exact
   * (GCRA); both at most {@link #MAX_BUCKET_TOKENS}.
   */
  static TierLimit tokenBucket(long rate, long periodMillis, long burst) {
    return new TokenBucket(rate, periodMillis, burst);
  }

  /** The most permits the tier lets through at once: its limit, or a token bucket's size. */
  long limit();

  /**
   * 0 for a window counter; for a running counter, the value the store raises it to before adding
   * ({@link dev.sluice.spi.CounterBatch#floor}) at {@code nowMillis}, &gt; 0.
   */
  default long floor(long nowMillis) {
    return 0;
  }

  /**
   * For a running counter, the most the store may let it hold after a change at {@code nowMillis}
   * ({@link dev.sluice.spi.CounterBatch#ceiling}): a change past it is not written, and is not
   * refunded. {@link Long#MAX_VALUE} (the default) for none.
   */
  default long ceiling(long nowMillis) {
    return Long.MAX_VALUE;
  }

  /**
   * Whether a counter past its {@link #ceiling} holds this request's change: false when the store
   * wrote nothing (a running counter with a ceiling), so a refusal has nothing to give back.
   */
  default boolean refusedUnwritten() {
    return false;
  }

  /** What the store adds for {@code permits}: the permits themselves, for a window. */
  default long delta(long permits) {
    return permits;
  }

  /**
   * Whether a passed request keeps its count until it completes (a slot), and gives it back then,
   * rather than for the rest of the window.
   */
  default boolean heldUntilReleased() {
    return false;
  }

  /**
   * The counter's window length: the tier's period, or the time a token bucket takes to fill (the
   * store keeps its counter at least two of them).
   */
  long periodMillis();

  /**
   * Where this identity's windows begin, in {@code [0, periodMillis)}; the same on every instance
   * of a fleet.
   */
  long offset(String identity);

  /**
   * Decides {@code c} from its inputs ({@link Count#observe}) and sets its outputs. A rejected
   * request's count includes other requests rejected at the same moment, whose refunds are on their
   * way; every request past the limit is refunded, so the outputs reckon from the count the window
   * settles at, not the inflated one.
   */
  void evaluate(Count c);

  /**
   * Milliseconds from {@code c}'s instant until one permit could pass, once {@code c} (a rejection)
   * has settled; how long a deny cache may answer for the identity.
   */
  long retryForOne(Count c);
}
