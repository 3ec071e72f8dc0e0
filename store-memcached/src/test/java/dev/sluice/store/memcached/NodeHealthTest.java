package dev.sluice.store.memcached;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.failsafe.CircuitBreaker;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

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
    NodeHealth health = new NodeHealth(failures, Duration.ofHours(1), key -> NODE, NEVER);
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

  /**
   * A breaker opened by failures while the node's connection stays up is half-opened as soon as a
   * probe finds memcached answering, long before its delay (an hour here); not while it does not.
   */
  @Test
  void anOpenedBreakerHalfOpensWhenMemcachedAnswersAProbe() {
    List<Consumer<Boolean>> probes = new ArrayList<>();
    NodeHealth health =
        new NodeHealth(
            1, Duration.ofHours(1), key -> NODE, (node, wanted, done) -> probes.add(done));
    health.failed(acquire(health));
    assertNull(acquire(health), "opened on the failure");
    assertEquals(1, probes.size(), "one probe started");
    probes.get(0).accept(false);
    assertNull(acquire(health), "still open while memcached does not answer");
    health.breaker("key").halfOpen(); // as after its delay
    health.failed(acquire(health)); // the trial fails
    assertEquals(2, probes.size(), "opening again starts a probe");
    probes.get(1).accept(true);
    CircuitBreaker<Object> b = acquire(health);
    assertNotNull(b, "half-opened when memcached answered");
    health.succeeded(b);
    assertTrue(health.breaker("key").isClosed(), "closed on the trial's success");
  }

  /**
   * A decision on two nodes that takes the permit of one's half-open breaker and is refused by the
   * other's hands the permit back: the first node lets the next call through, it is not left
   * half-open with no permit for ever.
   */
  @Test
  void aHalfOpenPermitTakenForARefusedBatchIsHandedBack() {
    SocketAddress other = InetSocketAddress.createUnresolved("other", 11211);
    NodeHealth health =
        new NodeHealth(1, Duration.ofHours(1), key -> key.startsWith("a") ? NODE : other, NEVER);
    health.failed(health.acquire(new String[] {"a"})[0]);
    health.failed(health.acquire(new String[] {"b"})[0]);
    health.breaker("a").halfOpen();
    assertThrows(StoreUnavailableException.class, () -> health.acquire(new String[] {"a", "b"}));
    assertNotNull(health.acquire(new String[] {"a"})[0], "the half-open permit was handed back");
  }

  private static final NodeHealth.Prober NEVER = NodeHealthTest::neverAnswers;

  /** The node's breaker with a permit taken, or null when it refuses the call. */
  private static CircuitBreaker<Object> acquire(NodeHealth health) {
    try {
      return health.acquire(new String[] {"key"})[0];
    } catch (StoreUnavailableException e) {
      return null;
    }
  }

  /** A node that never answers a probe: the breaker alone decides, as the reference does. */
  private static void neverAnswers(
      SocketAddress node, BooleanSupplier wanted, Consumer<Boolean> done) {
    done.accept(false);
  }
}
