package dev.sluice.store.memcached;

/** Memcached did not answer, in time or at all. The limiter fails open or closed on it. */
final class StoreUnavailableException extends RuntimeException {
  StoreUnavailableException(String message) {
    super(message, null, false, false);
  }

  private StoreUnavailableException(String message, Throwable cause) {
    super(message, cause, false, false);
  }

  /** A failure after the operation was sent: memcached may still apply it. */
  static StoreUnavailableException unconfirmed(String message) {
    return new StoreUnavailableException(
        message, new dev.sluice.spi.StoreTimeoutException(message));
  }

  /** {@link #unconfirmed}, with the counts memcached will answer late. */
  static StoreUnavailableException unconfirmed(
      String message, java.util.concurrent.CompletionStage<dev.sluice.spi.Counts> late) {
    return new StoreUnavailableException(
        message, new dev.sluice.spi.StoreTimeoutException(message, late));
  }
}
