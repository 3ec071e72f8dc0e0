package dev.sluice.store.memcached;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import net.spy.memcached.internal.OperationFuture;

/** Reading spymemcached's answers: under a deadline, as counts, and cancelling what is left. */
final class Replies {

  private Replies() {}

  static void cancel(Future<?>[] futures) {
    for (Future<?> f : futures) {
      if (f != null) {
        f.cancel(false);
      }
    }
  }

  /**
   * The answer to an operation that was sent. Any failure here is unconfirmed: the operation may
   * have reached memcached (a timeout, spymemcached's own, a connection lost with it in flight).
   */
  static <T> T get(Future<T> f, long deadline) {
    long wait = deadline - System.nanoTime();
    try {
      T v = f.get(Math.max(0, wait), TimeUnit.NANOSECONDS);
      if (v == null && f.isCancelled()) {
        throw StoreUnavailableException.unconfirmed("operation cancelled (node down)");
      }
      return v;
    } catch (TimeoutException e) {
      throw StoreUnavailableException.unconfirmed("memcached did not answer in time");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw StoreUnavailableException.unconfirmed("interrupted");
    } catch (ExecutionException | RuntimeException e) {
      throw StoreUnavailableException.unconfirmed("memcached failed: " + e.getMessage());
    }
  }

  static boolean succeeded(OperationFuture<Long> op) {
    return op.isDone() && op.getStatus() != null && op.getStatus().isSuccess();
  }

  /** Whether a read completed with an answer: a value, or memcached saying it holds none. */
  static boolean succeededOrMissing(OperationFuture<?> op) {
    if (op.isCancelled()) {
      return false;
    }
    var status = op.getStatus();
    return status != null
        && (status.isSuccess()
            || status.getStatusCode() == net.spy.memcached.ops.StatusCode.ERR_NOT_FOUND);
  }

  static long value(Long v) {
    return v == null ? -1 : v;
  }

  static long parse(Object value) {
    if (value == null) {
      return 0;
    }
    try {
      return Long.parseLong(value.toString().trim());
    } catch (NumberFormatException e) {
      return 0;
    }
  }
}
