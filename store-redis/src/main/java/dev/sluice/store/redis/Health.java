package dev.sluice.store.redis;

import dev.failsafe.CircuitBreaker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A circuit breaker per Redis node (a master: the one of a standalone server or a Sentinel group,
 * each master of a Cluster). An open breaker refuses calls at once; after its delay it lets one
 * probe through, and the probe's result closes or reopens it. Thread-safe.
 */
final class Health {

  private final int failures;
  private final Duration delay;
  private final Map<String, CircuitBreaker<Object>> breakers = new ConcurrentHashMap<>();

  /** The breakers that recorded a failure since they last recorded a success; usually none. */
  private final Set<CircuitBreaker<Object>> failing = ConcurrentHashMap.newKeySet();

  Health(int failures, Duration delay) {
    this.failures = failures;
    this.delay = delay;
  }

  CircuitBreaker<Object> breaker(String node) {
    CircuitBreaker<Object> b = breakers.get(node);
    if (b != null) {
      return b; // without the lambda computeIfAbsent would be given on every call
    }
    return breakers.computeIfAbsent(
        node,
        n ->
            CircuitBreaker.builder()
                .withFailureThreshold(failures)
                .withDelay(delay)
                .withSuccessThreshold(1)
                .build());
  }

  /** A node alone and its breaker alone, as {@link #acquire} takes them. */
  record One(List<CircuitBreaker<Object>> breakers, List<String> nodes) {}

  /** The last {@link #one} asked for: off a Cluster, always the same. */
  private volatile One one;

  /** {@link One} of {@code node}, the same lists call after call while it is the node asked for. */
  One one(String node) {
    One o = one;
    if (o != null && o.nodes().get(0).equals(node)) {
      return o;
    }
    o = new One(List.of(breaker(node)), List.of(node));
    one = o;
    return o;
  }

  /**
   * A permit from each breaker, in order. When one refuses, the half-open permits already taken are
   * handed back by re-entering half-open (closed breakers need no answer).
   *
   * @throws StoreUnavailableException when a breaker refuses
   */
  void acquire(List<CircuitBreaker<Object>> nodes, List<String> names) {
    List<CircuitBreaker<Object>> taken = List.of();
    for (int i = 0; i < nodes.size(); i++) {
      CircuitBreaker<Object> b = nodes.get(i);
      boolean halfOpen = b.isHalfOpen();
      if (!b.tryAcquirePermit()) {
        for (CircuitBreaker<Object> t : taken) {
          t.halfOpen();
        }
        throw new StoreUnavailableException("redis node " + names.get(i) + ": circuit open");
      }
      if (halfOpen) {
        if (taken.isEmpty()) {
          taken = new ArrayList<>(2);
        }
        taken.add(b);
      }
    }
  }

  /**
   * A call on the node succeeded. While a closed breaker has recorded no failure since its last
   * success, one more success changes nothing and is not recorded (Failsafe records under a lock
   * every call on the node would otherwise take).
   */
  void succeeded(CircuitBreaker<Object> b) {
    if (!b.isClosed() || (!failing.isEmpty() && failing.remove(b))) {
      b.recordSuccess();
    }
  }

  /** Closes every breaker: the connection they were failing on is back. */
  void reset() {
    breakers.values().forEach(CircuitBreaker::close);
    failing.clear();
  }

  void failed(CircuitBreaker<Object> b) {
    b.recordFailure();
    failing.add(b);
  }
}
