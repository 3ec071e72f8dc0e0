package dev.sluice.spi;

/**
 * A store sent a change and heard nothing back in time: the change may still be applied. A store
 * throws it (or puts it in the cause chain of what it throws) so its caller never sends the same
 * increment again, which would count it twice.
 */
public class StoreTimeoutException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  public StoreTimeoutException(String message) {
    super(message, null, false, false);
  }

  /** Whether {@code error}, or anything in its cause chain, is a {@link StoreTimeoutException}. */
  public static boolean in(Throwable error) {
    for (Throwable t = error; t != null; t = t.getCause()) {
      if (t instanceof StoreTimeoutException) {
        return true;
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return false;
  }
}
