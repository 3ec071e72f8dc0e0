package dev.sluice.store.memcached;

/** Memcached did not answer, in time or at all. The limiter fails open or closed on it. */
final class StoreUnavailableException extends RuntimeException {
  StoreUnavailableException(String message) {
    super(message, null, false, false);
  }
}
