package dev.sluice;

/** Whether the counter store answered a decision. */
public enum StoreStatus {
  /** The store answered (or the decision did not need it). */
  OK,
  /** The store failed or timed out and the request was let through. */
  FAILED_OPEN,
  /** The store failed or timed out and the request was rejected, as its rule asked. */
  FAILED_CLOSED,
  /**
   * The store failed or timed out and the request was decided by this instance's local counters, at
   * its share of each limit ({@link OnStoreFailure#LOCAL}).
   */
  LOCAL
}
