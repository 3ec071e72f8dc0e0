package dev.sluice.store.redis;

/** Redis did not answer, in time or at all. The limiter fails open or closed on it. */
final class StoreUnavailableException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  StoreUnavailableException(String message) {
    super(message, null, false, false);
  }

  private StoreUnavailableException(String message, Throwable cause) {
    super(message, cause, false, false);
  }

  /** A failure after the script was sent: Redis may still run it. */
  static StoreUnavailableException unconfirmed(String message) {
    return new StoreUnavailableException(
        message, new dev.sluice.spi.StoreTimeoutException(message));
  }

  /** {@link #unconfirmed}, with the counts Redis answers late, once it does. */
  static StoreUnavailableException unconfirmed(
      String message, java.util.concurrent.CompletionStage<dev.sluice.spi.Counts> late) {
    return new StoreUnavailableException(
        message, new dev.sluice.spi.StoreTimeoutException(message, late));
  }
}
