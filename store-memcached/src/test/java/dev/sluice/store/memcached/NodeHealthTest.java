package dev.sluice.store.memcached;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.failsafe.CircuitBreaker;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

class NodeHealthTest {

  private static final SocketAddress NODE = InetSocketAddress.createUnresolved("node", 11211);

  /**
   * A node's breaker records a success only when it changes something (a failure came since the
   * last one recorded, or the breaker is not closed): over any run of results, it lets the same
   * calls through and is in the same state after each as a breaker that records every result.
   */
  @Property(tries = 1_000)
  void skippingSuccessesThatChangeNothingChangesNoAnswer(
      @ForAll @Size(max = 80) List<Boolean> succeeded,
      @ForAll @IntRange(min = 1, max = 5) int failures) {
    NodeHealth health = new NodeHealth(failures, Duration.ofHours(1), key -> NODE);
    CircuitBreaker<Object> reference =
        CircuitBreaker.builder()
            .withFailureThreshold(failures)
            .withDelay(Duration.ofHours(1))
            .withSuccessThreshold(1)
            .build();
    for (boolean ok : succeeded) {
      CircuitBreaker<Object> b = acquire(health);
      boolean permitted = reference.tryAcquirePermit();
      assertEquals(permitted, b != null, "the same calls go through");
      if (!permitted) {
        continue;
      }
      if (ok) {
        reference.recordSuccess();
        health.succeeded(b);
      } else {
        reference.recordFailure();
        health.failed(b);
      }
      assertEquals(reference.getState(), b.getState(), "after " + succeeded);
    }
  }

  /** The node's breaker with a permit taken, or null when it refuses the call. */
  private static CircuitBreaker<Object> acquire(NodeHealth health) {
    try {
      return health.acquire(new String[] {"key"})[0];
    } catch (StoreUnavailableException e) {
      return null;
    }
  }
}
