package dev.sluice.spi;

import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.function.Executable;

/**
 * A store's late answer, for the tests of the stores that hand one over: the counts a call that
 * failed past its deadline was answered with once the store answered again.
 */
public final class LateAnswers {

  private LateAnswers() {}

  /**
   * The late answer to {@code call}, made while the store does not answer: between {@code stall}
   * and {@code resume}, {@code call} fails with {@code thrown}, and the counts its failure carries
   * complete within 5 s of the store answering again.
   */
  public static Counts whileStalled(
      Runnable stall, Runnable resume, Class<? extends Throwable> thrown, Executable call)
      throws Exception {
    stall.run();
    Throwable e;
    try {
      e = assertThrows(thrown, call);
    } finally {
      resume.run();
    }
    return awaited(e);
  }

  /**
   * The counts {@code failure}'s late answer completes with, within 5 s; an {@link AssertionError}
   * when it carries none.
   */
  public static Counts awaited(Throwable failure) throws Exception {
    return StoreTimeoutException.lateCounts(failure)
        .orElseThrow(() -> new AssertionError("no late answer: " + failure))
        .toCompletableFuture()
        .get(5, TimeUnit.SECONDS);
  }
}
