package dev.sluice.store.memcached;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import net.spy.memcached.MemcachedClient;
import net.spy.memcached.MemcachedNode;
import net.spy.memcached.ops.OperationStatus;
import net.spy.memcached.ops.StatsOperation;
import net.spy.memcached.protocol.binary.BinaryOperationFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads each node's {@code evictions} from memcached's {@code stats} every interval and counts the
 * rise: items memcached dropped before they expired because it was out of memory. An evicted
 * counter starts again from zero, so its client may get up to its limit again in that window.
 *
 * <p>Each node's first sample is its baseline; after that every rise is added to the node's total
 * ({@link #evictions()}), and a node restarted (its count lower than the last sample) adds its new
 * count. When a node starts evicting, one WARN line says so, with its items and memory; it is
 * logged again only after {@code quietMillis} without a rise on that node.
 *
 * <p>The {@code stats} requests are sent without waiting (one per node, on the store's connection)
 * and their answers handled on spymemcached's thread, so the scheduler is never blocked. A node
 * that does not answer keeps its last figures. Thread-safe.
 */
final class EvictionWatch implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(EvictionWatch.class);

  /** How often each node's stats are read unless told otherwise. */
  static final long DEFAULT_INTERVAL_MILLIS = 10_000;

  /** How long a node must not evict before its next eviction is logged again. */
  static final long QUIET_MILLIS = 10 * 60_000;

  private static final BinaryOperationFactory OPERATIONS = new BinaryOperationFactory();

  /** One node's figures, updated by its stats answers (one at a time per node). */
  private static final class Node {
    final String name;

    /** memcached's own {@code evictions} at the last answer, or -1 before the first. */
    long last = -1;

    /** The rises seen since the watch began. */
    final AtomicLong total = new AtomicLong();

    /** When the node last evicted (monotonic millis), or {@link Long#MIN_VALUE}. */
    long lastRise = Long.MIN_VALUE;

    Node(String name) {
      this.name = name;
    }
  }

  private final Supplier<MemcachedClient> client;
  private final LongSupplier clock;
  private final long intervalMillis;
  private final long quietMillis;
  private final Map<String, Node> nodes = new ConcurrentHashMap<>();
  private final List<String> names;
  private final ScheduledFuture<?> task;

  /**
   * Watches {@code servers} through {@code client} every {@code intervalMillis} on {@code
   * scheduler}; {@code clock} (monotonic milliseconds) times the quiet period.
   */
  EvictionWatch(
      Supplier<MemcachedClient> client,
      List<InetSocketAddress> servers,
      ScheduledExecutorService scheduler,
      LongSupplier clock,
      long intervalMillis,
      long quietMillis) {
    this.client = client;
    this.clock = clock;
    this.intervalMillis = intervalMillis;
    this.quietMillis = quietMillis;
    List<String> n = new java.util.ArrayList<>();
    for (InetSocketAddress a : servers) {
      String name = name(a);
      nodes.put(name, new Node(name));
      n.add(name);
    }
    this.names = List.copyOf(n);
    ScheduledFuture<?> t;
    try {
      t = scheduler.scheduleWithFixedDelay(this::poll, 0, intervalMillis, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      t = null; // the application shut its scheduler down: nothing is watched
    }
    this.task = t;
  }

  /** A node's name as the metric and the log write it: {@code host:port}. */
  static String name(SocketAddress a) {
    if (a instanceof InetSocketAddress i) {
      return i.getHostString() + ":" + i.getPort();
    }
    return String.valueOf(a);
  }

  /** Each node's evictions since the watch began, in the order the servers were given. */
  Map<String, Long> evictions() {
    Map<String, Long> out = new LinkedHashMap<>();
    for (String n : names) {
      out.put(n, nodes.get(n).total.get());
    }
    return Collections.unmodifiableMap(out);
  }

  /** Asks every node for its stats; each answer is handled as it comes. */
  void poll() {
    try {
      MemcachedClient c = client.get();
      CountDownLatch unused =
          c.broadcastOp(
              (MemcachedNode node, CountDownLatch latch) -> {
                Node watched = nodes.get(name(node.getSocketAddress()));
                return OPERATIONS.stats(null, new Answer(watched, latch));
              });
    } catch (RuntimeException e) {
      // The client is shutting down or being replaced: the next poll asks again.
      LOG.debug("memcached stats not sent", e);
    }
  }

  /** One node's stats answer. */
  private final class Answer implements StatsOperation.Callback {
    private final Node node;
    private final CountDownLatch latch;
    private final Map<String, String> stats = new java.util.HashMap<>();
    private boolean ok;

    Answer(Node node, CountDownLatch latch) {
      this.node = node;
      this.latch = latch;
    }

    @Override
    public void gotStat(String name, String value) {
      stats.put(name, value);
    }

    @Override
    public void receivedStatus(OperationStatus status) {
      ok = status.isSuccess();
    }

    @Override
    public void complete() {
      try {
        if (ok && node != null) {
          sample(node, stats);
        }
      } finally {
        latch.countDown();
      }
    }
  }

  /** Counts a node's rise since its last answer, and logs the start of evictions. */
  private void sample(Node node, Map<String, String> stats) {
    long now = clock.getAsLong();
    long evictions = number(stats.get("evictions"));
    if (evictions < 0) {
      return;
    }
    synchronized (node) {
      long rise = node.last < 0 ? 0 : evictions >= node.last ? evictions - node.last : evictions;
      node.last = evictions;
      if (rise <= 0) {
        return;
      }
      node.total.addAndGet(rise);
      boolean starting = node.lastRise == Long.MIN_VALUE || now - node.lastRise >= quietMillis;
      node.lastRise = now;
      if (starting) {
        LOG.warn(
            "memcached {} is evicting: {} items dropped for memory in the last {} ms ({} items,"
                + " {} of {} bytes used). An evicted counter starts again from zero, so its"
                + " client may get up to its limit again in that window; give memcached more"
                + " memory (-m; docs/RELIABILITY.md sizes it). Logged again after {} min without"
                + " evictions on this node.",
            node.name,
            rise,
            intervalMillis,
            stats.get("curr_items"),
            stats.get("bytes"),
            stats.get("limit_maxbytes"),
            quietMillis / 60_000);
      }
    }
  }

  private static long number(String s) {
    if (s == null) {
      return -1;
    }
    try {
      return Long.parseLong(s.trim());
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  @Override
  public void close() {
    if (task != null) {
      task.cancel(false);
    }
  }
}
