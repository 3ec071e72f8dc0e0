package dev.sluice;

/** What a limit does with a request when the counter store fails or times out. */
public enum OnStoreFailure {
  /** Lets the request through, without rate-limit headers (the usage is unknown). */
  ALLOW,
  /** Answers 503 with {@code Retry-After: 1}. */
  REJECT,
  /**
   * Limits in this instance's memory, with the same algorithm, at its share of each limit: {@code
   * limit ÷ instances}, rounded up, starting from the store's last count at that share. What is
   * admitted so is added to the store's count when it answers again, with the next decision's
   * increment.
   */
  LOCAL
}
