package dev.sluice.store.memcached;

import dev.sluice.spi.CounterUpdate;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import net.spy.memcached.ConnectionFactoryBuilder;
import net.spy.memcached.FailureMode;
import net.spy.memcached.MemcachedClient;
import net.spy.memcached.internal.OperationFuture;

/**
 * What a {@link Batch} counts with, and nothing else of its {@link MemcachedCounterStore}: the
 * connection to the servers, the keys, each node's health, the cache of previous windows' counts,
 * the running counters' lines, and the expiry of a window. Thread-safe; shared by every batch of
 * one store.
 */
final class Counting {

  /** The count of each counter's last ended window read. */
  final PreviousCounts previous = new PreviousCounts(MemcachedCounterStore.PREVIOUS_CACHE_SIZE);

  final Keys keys;

  final NodeHealth health;

  /** Running counters (values moved by compare-and-set, after a floor and within a ceiling). */
  final RunningLines lines;

  /** Whether a batch reads its previous windows with one multiget per node. */
  final boolean bulkGets;

  private final InstantSource clock;
  private final Connection connection;

  /** The server when there is only one, else null. */
  private final SocketAddress singleNode;

  /**
   * Twice the longest a decision waits: an operation memcached took and has not answered by then is
   * given up on (a round of running counters abandoned, a late answer no longer awaited).
   */
  final long stuckNanos;

  /**
   * Connects to {@code servers} (binary protocol, consistent hashing by {@link KeyHash}), waiting
   * up to the connect timeout.
   */
  Counting(MemcachedStoreBuilder b, long stuckNanos) throws IOException {
    this.stuckNanos = stuckNanos;
    this.keys = new Keys(b.prefix);
    this.bulkGets = b.bulkGets;
    this.clock = b.clock;
    this.health =
        new NodeHealth(b.breakerFailures, b.breakerDelay, this::nodeOf, this::untilAnswers);
    this.lines = new RunningLines(this, MemcachedCounterStore.PREVIOUS_CACHE_SIZE, stuckNanos);
    this.connection = connect(b.servers, b, health, b.scheduler);
    this.singleNode =
        b.servers.size() == 1
            ? client().getNodeLocator().getAll().iterator().next().getSocketAddress()
            : null;
  }

  private static Connection connect(
      List<InetSocketAddress> servers,
      MemcachedStoreBuilder b,
      NodeHealth health,
      ScheduledExecutorService scheduler)
      throws IOException {
    long opTimeout = Math.max(1, b.operationTimeout.toMillis());
    long maxReconnect = Math.max(1, b.maxReconnectDelay.toSeconds());
    int timeoutThreshold = b.timeoutExceptionThreshold;
    return new Connection(
        () ->
            new ConnectionFactoryBuilder()
                .setProtocol(ConnectionFactoryBuilder.Protocol.BINARY)
                .setLocatorType(ConnectionFactoryBuilder.Locator.CONSISTENT)
                .setHashAlg(KeyHash.INSTANCE)
                .setOpTimeout(opTimeout)
                .setOpQueueMaxBlockTime(0)
                .setFailureMode(FailureMode.Cancel)
                .setMaxReconnectDelay(maxReconnect)
                .setTimeoutExceptionThreshold(timeoutThreshold)
                .setUseNagleAlgorithm(false)
                .setDaemon(true),
        servers,
        b.connectTimeout.toMillis(),
        health,
        scheduler);
  }

  private void untilAnswers(SocketAddress node, BooleanSupplier wanted, Consumer<Boolean> done) {
    connection.untilAnswers(node, wanted, done);
  }

  Connection connection() {
    return connection;
  }

  /** The current client: a call reads it once and uses it throughout. */
  MemcachedClient client() {
    return connection.client();
  }

  SocketAddress nodeOf(String key) {
    if (singleNode != null) {
      return singleNode; // one server: no need to hash the key to find it
    }
    return client().getNodeLocator().getPrimary(key).getSocketAddress();
  }

  /** {@code incr} by the update's delta; a key memcached does not hold is created at the delta. */
  OperationFuture<Long> incr(String key, CounterUpdate u) {
    return client().asyncIncr(key, u.delta(), u.delta(), expiry(u.periodMillis()));
  }

  /** Expiry for a window of {@code periodMillis}: two periods plus slack, absolute past 30 days. */
  int expiry(long periodMillis) {
    long seconds =
        Math.floorDiv(2 * periodMillis + 999, 1000) + MemcachedCounterStore.TTL_SLACK_SECONDS;
    if (seconds > MemcachedCounterStore.MAX_RELATIVE_TTL) {
      seconds += clock.millis() / 1000;
    }
    return (int) Math.min(Integer.MAX_VALUE, seconds);
  }

  /** Gives each update's delta back; a running counter's line learns it changed. */
  void decrement(List<CounterUpdate> updates) {
    Wakeups.hold();
    try {
      for (CounterUpdate u : updates) {
        String key = keys.key(u);
        if (u.running()) {
          lines.changed(key);
        }
        if (health.breaker(key).isClosed()) {
          // Binary decr never goes below 0, and a missing key stays missing.
          OperationFuture<Long> unused = client().asyncDecr(key, u.delta());
        }
      }
    } finally {
      Wakeups.release();
    }
  }
}
