package dev.sluice.spi;

import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * A store sent a change and heard nothing back in time: the change may still be applied. A store
 * throws it (or puts it in the cause chain of what it throws) so its caller never sends the same
 * increment again, which would count it twice.
 *
 * <p>A store that keeps listening for the answer passes it on ({@link #lateCounts}): the counts of
 * the call's updates, by index, once the store answers after all. The limiter then learns from them
 * (a key found over its limit is refused locally) and gives back what a refused request was
 * counted.
 */
public class StoreTimeoutException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /** The late answer, or null when the store does not wait for one. */
  private final transient CompletionStage<Counts> late;

  public StoreTimeoutException(String message) {
    this(message, null);
  }

  /**
   * A timeout whose answer may still come.
   *
   * @param message what timed out
   * @param late completed with the counts {@link CounterStore#increment(java.util.List)} would have
   *     returned, once the store answers; exceptionally when it never will (a count it cannot tell,
   *     a connection lost). Null when the store does not wait for the answer.
   */
  public StoreTimeoutException(String message, CompletionStage<Counts> late) {
    super(message, null, false, false);
    this.late = late;
  }

  /** Whether {@code error}, or anything in its cause chain, is a {@link StoreTimeoutException}. */
  public static boolean in(Throwable error) {
    return first(error) != null;
  }

  /**
   * The late answer carried by the first {@link StoreTimeoutException} in {@code error}'s cause
   * chain, if it carries one.
   *
   * @param error what the store threw
   * @return the counts the store will answer late, if it listens for them
   */
  public static Optional<CompletionStage<Counts>> lateCounts(Throwable error) {
    StoreTimeoutException t = first(error);
    return t == null ? Optional.empty() : Optional.ofNullable(t.late);
  }

  private static StoreTimeoutException first(Throwable error) {
    for (Throwable t = error; t != null; t = t.getCause()) {
      if (t instanceof StoreTimeoutException s) {
        return s;
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return null;
  }
}
