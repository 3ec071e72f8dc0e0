package dev.sluice.store.memcached;

import dev.failsafe.CircuitBreaker;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether each memcached node may be called: a circuit breaker per node, and the nodes whose
 * connection is lost, which no call reaches until they are connected again. A breaker opened by
 * failures on a connection that stayed up (memcached stalled or slow) lets a call through as soon
 * as memcached answers a probe again, or after its delay, whichever comes first: instances that
 * share a stalled store all count in it again within about 120 ms of its return, not each after its
 * own breaker's delay. Thread-safe.
 */
final class NodeHealth implements Connection.Nodes {

  private static final Logger LOG = LoggerFactory.getLogger(MemcachedCounterStore.class);

  private final int failures;
  private final Duration delay;
  private final Function<String, SocketAddress> nodeOf;
  private final Map<SocketAddress, CircuitBreaker<Object>> breakers = new ConcurrentHashMap<>();
  private final Set<SocketAddress> down = ConcurrentHashMap.newKeySet();

  /** The breakers that recorded a failure since they last recorded a success; usually none. */
  private final Set<CircuitBreaker<Object>> failing = ConcurrentHashMap.newKeySet();

  /** Probes a node until memcached answers; see {@link Connection#untilAnswers}. */
  interface Prober {
    void untilAnswers(SocketAddress node, BooleanSupplier wanted, Consumer<Boolean> done);
  }

  private final Prober prober;

  /** The nodes whose open breaker is being probed. */
  private final Set<SocketAddress> probed = ConcurrentHashMap.newKeySet();

  private volatile boolean closing;

  /**
   * @param failures failed decisions in a row that open a node's breaker
   * @param delay how long an open breaker waits before it lets a probe through
   * @param nodeOf the node a key lives on
   * @param prober probes a node whose breaker opened while its connection stayed up
   */
  NodeHealth(int failures, Duration delay, Function<String, SocketAddress> nodeOf, Prober prober) {
    this.failures = failures;
    this.delay = delay;
    this.nodeOf = nodeOf;
    this.prober = prober;
  }

  /**
   * One permit from the breaker of each distinct node the keys live on, as an array parallel to
   * {@code keys}. A node that is down refuses the batch before any permit is taken. A permit taken
   * must be answered with a recorded result (else a half-open breaker would wait for it forever);
   * when a later node's breaker refuses, the half-open permits already taken are handed back by
   * opening the breaker and half-opening it again (Failsafe's half-open of a half-open breaker
   * changes nothing), and closed breakers need no answer, so a refusing node never records anything
   * on a healthy one. A node whose connection is lost is probed by the connection, not by requests.
   *
   * @throws StoreUnavailableException when a node is down or its breaker refuses
   */
  CircuitBreaker<Object>[] acquire(String[] keys) {
    @SuppressWarnings("unchecked")
    CircuitBreaker<Object>[] out = new CircuitBreaker[keys.length];
    for (int i = 0; i < keys.length; i++) {
      SocketAddress node = nodeOf.apply(keys[i]);
      out[i] = breaker(node);
      if (down.contains(node)) {
        throw new StoreUnavailableException("memcached node " + node + " is down");
      }
    }
    List<CircuitBreaker<Object>> taken = List.of();
    for (CircuitBreaker<Object> b : distinct(out)) {
      if (!b.tryAcquirePermit()) {
        for (CircuitBreaker<Object> t : taken) {
          if (t.isHalfOpen()) { // not one closed or opened meanwhile
            t.open();
            t.halfOpen();
          }
        }
        throw new StoreUnavailableException("memcached: circuit open");
      }
      if (b.isHalfOpen()) { // the permit was a half-open breaker's (an open one half-opens on it)
        if (taken.isEmpty()) {
          taken = new ArrayList<>(2);
        }
        taken.add(b);
      }
    }
    return out;
  }

  /**
   * Tells a node's breaker that a decision's operations on it succeeded. A breaker opens on {@code
   * failures} failed decisions in a row, so while a closed breaker has recorded no failure since
   * its last success, one more success changes nothing and is not recorded: Failsafe records a
   * result under the breaker's lock, which every decision on the node would otherwise take. (A
   * success that races a failure may go unrecorded; the next one is.)
   */
  void succeeded(CircuitBreaker<Object> b) {
    if (!b.isClosed() || (!failing.isEmpty() && failing.remove(b))) {
      b.recordSuccess();
    }
  }

  /** Tells a node's breaker that a decision's operations on it failed. */
  void failed(CircuitBreaker<Object> b) {
    b.recordFailure();
    failing.add(b);
  }

  /** The breaker of {@code key}'s node. */
  CircuitBreaker<Object> breaker(String key) {
    return breaker(nodeOf.apply(key));
  }

  private CircuitBreaker<Object> breaker(SocketAddress node) {
    return breakers.computeIfAbsent(
        node,
        a ->
            CircuitBreaker.builder()
                .withFailureThreshold(failures)
                .withDelay(delay)
                .withSuccessThreshold(1)
                .onOpen(e -> opened(a))
                .build());
  }

  /**
   * A node's breaker opened: unless its connection is lost (the connection probes it then), it is
   * half-opened as soon as memcached answers a probe, so the next call tries it.
   */
  private void opened(SocketAddress node) {
    if (closing || down.contains(node) || !probed.add(node)) {
      return;
    }
    prober.untilAnswers(
        node,
        // Within the breaker's delay only: after it the breaker lets a call through itself.
        () -> {
          CircuitBreaker<Object> b = breaker(node);
          return !closing && !down.contains(node) && b.isOpen() && !b.getRemainingDelay().isZero();
        },
        answered -> {
          probed.remove(node);
          CircuitBreaker<Object> b = breaker(node);
          if (answered && b.isOpen()) { // not if it half-opened on its delay meanwhile
            b.halfOpen();
          }
        });
  }

  @Override
  public void down(SocketAddress node) {
    if (!closing && down.add(node)) {
      breaker(node).open();
      LOG.warn(
          "memcached node {} lost: its counters fail open (or closed, per rule) until it reconnects",
          node);
    }
  }

  @Override
  public void up(SocketAddress node) {
    if (down.remove(node)) {
      breaker(node).close();
      LOG.warn("memcached node {} reconnected: counting again", node);
    }
  }

  @Override
  public boolean isDown(SocketAddress node) {
    return down.contains(node);
  }

  /** From now on a lost connection is the store closing, not a node failing. */
  void closing() {
    closing = true;
  }

  /** Each breaker once, in order. */
  static List<CircuitBreaker<Object>> distinct(CircuitBreaker<Object>[] nodes) {
    if (nodes.length == 1) {
      return List.of(nodes[0]);
    }
    List<CircuitBreaker<Object>> out = new ArrayList<>(2);
    for (CircuitBreaker<Object> b : nodes) {
      if (!out.contains(b)) {
        out.add(b);
      }
    }
    return out;
  }
}
