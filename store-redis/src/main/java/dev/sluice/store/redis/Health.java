package dev.sluice.store.redis;

import dev.failsafe.CircuitBreaker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A circuit breaker per Redis node (a master: the one of a standalone server or a Sentinel group,
 * each master of a Cluster). An open breaker refuses calls at once; it lets one call through as
 * soon as the node answers a {@code TIME} sent 100 ms after it opened (Redis stalled takes its
 * commands up again), or after its delay, whichever comes first, and that call's result closes or
 * reopens it. So instances that share a stalled Redis count in it again together, within about 100
 * ms of its return, not each after its own breaker's delay. Thread-safe.
 */
final class Health {

  /** The pause before a node whose probe failed (Lettuce's timeout) is probed again. */
  static final long PROBE_AGAIN_MILLIS = 100;

  /** Completes when Redis at a node answers a command sent now; see {@link Connection#answered}. */
  interface Prober {
    CompletableFuture<?> answered(String node);
  }

  private final int failures;
  private final Duration delay;
  private final Prober prober;
  private final ScheduledExecutorService scheduler;

  /** The nodes whose open breaker is being probed. */
  private final Set<String> probed = ConcurrentHashMap.newKeySet();

  private volatile boolean closed;
  private final Map<String, CircuitBreaker<Object>> breakers = new ConcurrentHashMap<>();

  /** The breakers that recorded a failure since they last recorded a success; usually none. */
  private final Set<CircuitBreaker<Object>> failing = ConcurrentHashMap.newKeySet();

  Health(int failures, Duration delay, Prober prober, ScheduledExecutorService scheduler) {
    this.failures = failures;
    this.delay = delay;
    this.prober = prober;
    this.scheduler = scheduler;
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
                .onOpen(e -> opened(n))
                .build());
  }

  /**
   * {@code node}'s breaker opened: it is half-opened as soon as the node answers a probe, the first
   * sent {@link #PROBE_AGAIN_MILLIS} ms after it opened (so a Redis that answers probes but fails
   * calls gets at most one trial call per interval).
   */
  private void opened(String node) {
    if (probed.add(node)) {
      probeLater(node);
    }
  }

  private void probeLater(String node) {
    try {
      var unused = scheduler.schedule(() -> probe(node), PROBE_AGAIN_MILLIS, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException stopped) {
      probed.remove(node); // the application shut its scheduler down
    }
  }

  /**
   * Sends {@code node} a probe while its breaker is open within its delay: after the delay the
   * breaker lets a call through itself, and a node no call reaches any more (a master replaced) is
   * left alone.
   */
  private void probe(String node) {
    CircuitBreaker<Object> b = breaker(node);
    if (closed || !b.isOpen() || b.getRemainingDelay().isZero()) {
      probed.remove(node);
      return;
    }
    CompletableFuture<?> answer;
    try {
      answer = prober.answered(node);
    } catch (RuntimeException e) {
      answer = CompletableFuture.failedFuture(e);
    }
    var unused =
        answer.whenComplete(
            (v, e) -> {
              if (e != null) {
                probeLater(node);
                return;
              }
              probed.remove(node);
              if (b.isOpen()) { // not if it half-opened on its delay meanwhile
                b.halfOpen();
              }
            });
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
   * handed back by opening each breaker and half-opening it again (Failsafe's half-open of a
   * half-open breaker changes nothing); closed breakers need no answer.
   *
   * @throws StoreUnavailableException when a breaker refuses
   */
  void acquire(List<CircuitBreaker<Object>> nodes, List<String> names) {
    List<CircuitBreaker<Object>> taken = List.of();
    for (int i = 0; i < nodes.size(); i++) {
      CircuitBreaker<Object> b = nodes.get(i);
      if (!b.tryAcquirePermit()) {
        for (CircuitBreaker<Object> t : taken) {
          if (t.isHalfOpen()) { // not one closed or opened meanwhile
            t.open();
            t.halfOpen();
          }
        }
        throw new StoreUnavailableException("redis node " + names.get(i) + ": circuit open");
      }
      if (b.isHalfOpen()) { // the permit was a half-open breaker's (an open one half-opens on it)
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

  /** The store is closed: no node is probed again. */
  void close() {
    closed = true;
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
