package dev.sluice.algorithm;

/**
 * Requests in flight: at most {@code limit} at once per identity. Each request that enters adds 1
 * to the counter of the window it entered in, and takes it back when it completes; a request in
 * flight is the current window's count plus the previous one's. The period is the slots' time to
 * live: a slot never given back (its instance died) drops out of the count once the window after
 * next begins, between one and two periods after it was taken. A request running longer than one
 * period may stop being counted as early as that.
 */
final class ConcurrentRequests extends Window {

  /** What a client refused for concurrency is told to wait: a slot may free at any moment. */
  static final long RETRY_MILLIS = 1_000;

  ConcurrentRequests(long limit, long periodMillis) {
    super(limit, periodMillis);
  }

  @Override
  public long offset(String identity) {
    return 0;
  }

  @Override
  public void evaluate(Count c) {
    long inFlight = c.current + c.previous;
    boolean pass = inFlight <= limit;
    long used = pass ? inFlight : Math.min(inFlight - c.permits, limit);
    long retry = c.permits > limit ? Count.NEVER : RETRY_MILLIS;
    // What the current window's counter settles at: the previous window's slots are not its own.
    long settled =
        pass ? c.current : Math.max(0, Math.min(c.current - c.permits, limit - c.previous));
    c.outcome(pass, used, c.windowStart + 2 * period, retry, settled);
  }

  /**
   * 0: a slot may free at any moment, on any instance, so a refusal is never remembered (a deny
   * cache would refuse a client whose requests have completed).
   */
  @Override
  public long retryForOne(Count c) {
    return 0;
  }

  @Override
  public boolean heldUntilReleased() {
    return true;
  }
}
