package dev.sluice.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A thread named with a prefix given to {@link NonBlocking} fails on a blocking call; others don't.
 */
class NonBlockingTest {

  @Test
  void aThreadOfAGivenPrefixFailsOnABlockingCallAndOthersDoNot() throws Exception {
    NonBlocking.forbidOn("testkit-loop-a");
    NonBlocking.forbidOn("testkit-loop-b"); // after the install: added all the same
    assertEquals("BlockingOperationError", sleepOn("testkit-loop-a-1"));
    assertEquals("BlockingOperationError", sleepOn("testkit-loop-b-1"));
    assertNull(sleepOn("testkit-other"));
  }

  /** What {@code Thread.sleep} threw on a thread of that name, or null. */
  private static String sleepOn(String name) throws InterruptedException {
    AtomicReference<String> thrown = new AtomicReference<>();
    Thread t =
        new Thread(
            () -> {
              try {
                Thread.sleep(1);
              } catch (Throwable e) {
                thrown.set(e.getClass().getSimpleName());
              }
            },
            name);
    t.start();
    t.join(10_000);
    return thrown.get();
  }
}
