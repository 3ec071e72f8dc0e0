package dev.sluice.algorithm;

/**
 * One tier's counts in one decision, and what its {@link TierLimit} made of them. Mutable and
 * reused from call to call by one thread at a time.
 */
public final class Count {

  /** {@link #retryMillis()} of a request larger than the limit, which can never pass. */
  public static final long NEVER = -1;

  long now;
  long windowStart;
  long current;
  long previous;
  long permits;

  boolean passed;
  long used;
  long resetAt;
  long retry;
  long settled;

  /**
   * Sets the inputs: the instant, the start of the identity's current window, the store's counts of
   * that window (this request included) and of the one before, and the permits asked for.
   */
  public void observe(long now, long windowStart, long current, long previous, long permits) {
    this.now = now;
    this.windowStart = windowStart;
    this.current = current;
    this.previous = previous;
    this.permits = permits;
  }

  /** {@return whether the tier lets the request through} */
  public boolean passed() {
    return passed;
  }

  /**
   * {@return permits counted against the tier, after any refund (a sliding estimate is rounded up)}
   */
  public long used() {
    return used;
  }

  /**
   * {@return the instant (milliseconds) the tier's count is back to zero if nothing else arrives}
   */
  public long resetAt() {
    return resetAt;
  }

  /**
   * For a failing tier, milliseconds until the request could pass (at least 1), or {@link #NEVER};
   * 0 when it passed.
   */
  public long retryMillis() {
    return retry;
  }

  /**
   * What the tier's counter settles at once every refund of the decision's moment has landed: the
   * store's count (a token bucket's arrival time) reckoned without refused requests. What a later
   * decision that makes no store call reckons from.
   */
  public long settled() {
    return settled;
  }

  /** Sets this count to {@code other}'s inputs and outcome. */
  public void copy(Count other) {
    now = other.now;
    windowStart = other.windowStart;
    current = other.current;
    previous = other.previous;
    permits = other.permits;
    passed = other.passed;
    used = other.used;
    resetAt = other.resetAt;
    retry = other.retry;
    settled = other.settled;
  }

  void outcome(boolean passed, long used, long resetAt, long retry, long settled) {
    this.passed = passed;
    this.used = used;
    this.resetAt = resetAt;
    this.retry = passed ? 0 : retry == NEVER ? NEVER : Math.max(1, retry);
    this.settled = settled;
  }
}
