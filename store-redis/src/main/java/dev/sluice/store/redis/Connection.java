package dev.sluice.store.redis;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.SslOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import io.netty.util.HashedWheelTimer;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The store's one connection to Redis: a standalone server or a Sentinel group's master (Lettuce
 * asks the sentinels for the master at every reconnection, so a failover is followed), or a Cluster
 * (one connection per node, topology refreshed on MOVED, on reconnections and periodically).
 * Commands fail at once while the connection is down instead of queueing; Lettuce reconnects after
 * a growing pause of at most {@code maxReconnectDelay}. A Redis not reachable when the store is
 * built is retried in the background, and calls fail until it answers. Thread-safe.
 */
final class Connection implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(RedisCounterStore.class);

  private final ClientResources resources;
  private final HashedWheelTimer timer;
  private final RedisClient client;
  private final RedisClusterClient cluster;
  private final RedisURI standalone;
  private final String describe;
  private final long retryMillis;
  private volatile StatefulConnection<String, String> connection;
  private volatile RedisScriptingAsyncCommands<String, String> commands;
  private volatile StatefulRedisClusterConnection<String, String> clusterConnection;
  private volatile boolean closed;
  private volatile boolean warnedUnreachable;
  private final ScheduledExecutorService scheduler;

  /** Whether a connection was lost since it was last (re)connected. */
  private final Set<Object> lost = ConcurrentHashMap.newKeySet();

  private static final Object ANY = new Object();

  /**
   * The scripts, read from the jar as this class is initialized, in the thread that builds a store:
   * not later, on an event loop, where reading a file would block it.
   */
  private static final List<Script> SCRIPTS = Script.ALL;

  Connection(
      List<RedisURI> uris,
      boolean isCluster,
      Duration connectTimeout,
      Duration commandTimeout,
      Duration maxReconnectDelay,
      ScheduledExecutorService scheduler,
      java.nio.file.Path trustedCertificates,
      Runnable reconnected) {
    this.retryMillis = Math.max(10, maxReconnectDelay.toMillis());
    this.describe = (isCluster ? "cluster " : "") + uris;
    // Lettuce schedules reconnections and command timeouts on this timer; its default ticks every
    // 100 ms, which alone made a reconnection take up to 100 ms.
    this.timer =
        new HashedWheelTimer(
            new DefaultThreadFactory("sluice-redis-timer", true), 10, TimeUnit.MILLISECONDS);
    this.resources =
        ClientResources.builder()
            .timer(timer)
            .ioThreadPoolSize(2)
            .computationThreadPoolSize(2)
            .reconnectDelay(
                Delay.exponential(
                    Duration.ofMillis(1), maxReconnectDelay, 2, TimeUnit.MILLISECONDS))
            .build();
    SocketOptions socket =
        SocketOptions.builder().connectTimeout(connectTimeout).keepAlive(true).build();
    TimeoutOptions timeouts =
        TimeoutOptions.builder()
            .timeoutCommands(true)
            .timeoutSource(new CallersDeadline(commandTimeout))
            .build();
    SslOptions ssl =
        trustedCertificates == null
            ? SslOptions.create()
            : SslOptions.builder()
                .jdkSslProvider()
                .trustManager(trustedCertificates.toFile())
                .build();
    for (RedisURI u : uris) {
      u.setTimeout(commandTimeout);
    }
    if (isCluster) {
      this.client = null;
      this.standalone = null;
      this.cluster = RedisClusterClient.create(resources, uris);
      cluster.setOptions(
          ClusterClientOptions.builder()
              .autoReconnect(true)
              .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
              .socketOptions(socket)
              .sslOptions(ssl)
              .timeoutOptions(timeouts)
              .topologyRefreshOptions(
                  ClusterTopologyRefreshOptions.builder()
                      .enablePeriodicRefresh(Duration.ofSeconds(10))
                      .enableAllAdaptiveRefreshTriggers()
                      .adaptiveRefreshTriggersTimeout(Duration.ofMillis(50))
                      .build())
              .build());
    } else {
      if (uris.size() != 1) {
        throw new IllegalArgumentException("one redis URI, or a cluster");
      }
      this.cluster = null;
      this.standalone = uris.get(0);
      this.client = RedisClient.create(resources);
      client.setOptions(
          ClientOptions.builder()
              .autoReconnect(true)
              .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
              .socketOptions(socket)
              .sslOptions(ssl)
              .timeoutOptions(timeouts)
              .build());
    }
    RedisConnectionStateListener events =
        new RedisConnectionStateListener() {
          @Override
          public void onRedisConnected(RedisChannelHandler<?, ?> c, SocketAddress address) {
            if (lost.remove(ANY)) {
              LOG.warn("redis {} reconnected: counting again", address);
              reconnected.run();
            }
          }

          @Override
          public void onRedisDisconnected(RedisChannelHandler<?, ?> c) {
            if (!closed && commands != null) {
              LOG.warn(
                  "redis {} lost: its counters fail open (or closed, per rule) until it"
                      + " reconnects",
                  describe);
              lost.add(ANY);
            }
          }
        };
    if (client != null) {
      client.addListener(events);
    } else {
      cluster.addListener(events);
    }
    this.scheduler = scheduler;
    CompletableFuture<Boolean> first = connect();
    try {
      first.get(connectTimeout.toMillis() + 500, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException e) {
      // Not yet: the attempt goes on, and failed ones are retried in the background.
    }
  }

  /**
   * One connection attempt, without blocking a thread; a failed one is logged once and tried again
   * after {@code maxReconnectDelay} (at least 10 ms) until it succeeds or the store is closed.
   */
  @SuppressWarnings("unchecked") // a standalone client connects standalone connections
  private CompletableFuture<Boolean> connect() {
    CompletableFuture<? extends StatefulConnection<String, String>> attempt;
    try {
      attempt =
          cluster != null
              // The topology first: a cluster client connects only once it knows the partitions.
              ? cluster
                  .refreshPartitionsAsync()
                  .toCompletableFuture()
                  .thenCompose(v -> cluster.connectAsync(StringCodec.UTF8))
                  .thenCompose(cc -> toEveryMaster(cc).thenApply(v -> cc))
              : client.connectAsync(StringCodec.UTF8, standalone).toCompletableFuture();
    } catch (RuntimeException e) {
      attempt = CompletableFuture.failedFuture(e);
    }
    return attempt.handle(
        (c, error) -> {
          if (error != null) {
            if (!warnedUnreachable) {
              warnedUnreachable = true;
              LOG.warn(
                  "redis {} not reachable ({}): retrying, its counters fail open (or closed, per"
                      + " rule) until it answers",
                  describe,
                  rootCause(error));
            }
            synchronized (this) {
              if (!closed) {
                var unused =
                    scheduler.schedule(
                        () -> {
                          var unusedAttempt = connect();
                        },
                        retryMillis,
                        TimeUnit.MILLISECONDS);
              }
            }
            return false;
          }
          synchronized (this) {
            if (closed) {
              c.close();
              return false;
            }
            connection = c;
            if (c instanceof StatefulRedisClusterConnection<String, String> cc) {
              clusterConnection = cc;
              commands = cc.async();
            } else {
              commands = ((StatefulRedisConnection<String, String>) c).async();
            }
          }
          preload();
          return true;
        });
  }

  /**
   * Opens the connection to every master a Cluster's slots route to (Lettuce opens each on a node's
   * first command otherwise), so a cold store's first decision finds them open; a master that
   * cannot be reached does not hold the others up, and is connected on its first command.
   */
  private static CompletableFuture<Void> toEveryMaster(
      StatefulRedisClusterConnection<String, String> cc) {
    List<CompletableFuture<?>> opening = new ArrayList<>();
    for (RedisClusterNode node : cc.getPartitions()) {
      if (node.is(RedisClusterNode.NodeFlag.UPSTREAM) && !node.getSlots().isEmpty()) {
        opening.add(
            cc.getConnectionAsync(node.getUri().getHost(), node.getUri().getPort())
                .handle((c, e) -> null));
      }
    }
    return CompletableFuture.allOf(opening.toArray(new CompletableFuture<?>[0]));
  }

  private static String rootCause(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    return t == e ? String.valueOf(e.getMessage()) : e.getMessage() + ": " + t;
  }

  /**
   * Sends every script to Redis ahead of its first use, so a refund sent right after connecting is
   * not reordered behind a NOSCRIPT answer; best effort (a script missing later is sent again).
   */
  private void preload() {
    for (Script s : SCRIPTS) {
      var unused = commands.scriptLoad(s.body);
    }
  }

  /**
   * The commands, or a failure when Redis was never reached.
   *
   * @throws StoreUnavailableException before the first connection
   */
  RedisScriptingAsyncCommands<String, String> commands() {
    RedisScriptingAsyncCommands<String, String> c = commands;
    if (c == null) {
      throw new StoreUnavailableException("redis " + describe + " not connected yet");
    }
    return c;
  }

  boolean isCluster() {
    return cluster != null;
  }

  /** The least time between two topology reads on failed calls. */
  static final long REFRESH_NANOS = 25_000_000L;

  private final java.util.concurrent.atomic.AtomicLong lastRefresh =
      new java.util.concurrent.atomic.AtomicLong(System.nanoTime());

  /**
   * A call to a Cluster failed: reads the topology again (at most every 25 ms), so a replica
   * promoted in a dead master's place is found without waiting for the periodic refresh.
   */
  void failed() {
    if (cluster == null || commands == null) {
      return;
    }
    long last = lastRefresh.get();
    long now = System.nanoTime();
    if (now - last > REFRESH_NANOS && lastRefresh.compareAndSet(last, now)) {
      var unused = cluster.refreshPartitionsAsync();
    }
  }

  /** The hash slot of a key, or 0 when not a cluster (every key goes to one master). */
  int slotOf(String key) {
    return cluster == null ? 0 : SlotHash.getSlot(key);
  }

  /**
   * Completes when Redis at {@code node} (as {@link #nodeOf} names it) answers a {@code TIME} sent
   * now, through the connection decisions use: behind a stall it completes when Redis takes up its
   * commands again, or fails on Lettuce's timeout.
   */
  CompletableFuture<Object> answered(String node) {
    StatefulRedisClusterConnection<String, String> cc = clusterConnection;
    if (cc == null) {
      return Script.TIME.run(commands(), ScriptOutputType.MULTI, new String[0]);
    }
    int colon = node.lastIndexOf(':');
    if (colon < 0) {
      return CompletableFuture.failedFuture(new StoreUnavailableException("no master: " + node));
    }
    return cc.getConnectionAsync(
            node.substring(0, colon), Integer.parseInt(node.substring(colon + 1)))
        .thenCompose(c -> Script.TIME.run(c.async(), ScriptOutputType.MULTI, new String[0]));
  }

  /**
   * Each master's {@code INFO}, sent now on the connection decisions use, by the master's name:
   * {@code host:port}, or {@code sentinel master NAME} for a Sentinel group's.
   *
   * @throws StoreUnavailableException before the first connection
   */
  @SuppressWarnings("unchecked") // a standalone client connects standalone connections
  java.util.Map<String, java.util.concurrent.CompletionStage<String>> info() {
    StatefulRedisClusterConnection<String, String> cc = clusterConnection;
    java.util.Map<String, java.util.concurrent.CompletionStage<String>> out =
        new java.util.LinkedHashMap<>();
    if (cc == null) {
      commands(); // fails before the first connection
      out.put(
          standaloneName(), ((StatefulRedisConnection<String, String>) connection).async().info());
      return out;
    }
    for (RedisClusterNode node : cc.getPartitions()) {
      if (node.is(RedisClusterNode.NodeFlag.UPSTREAM) && !node.getSlots().isEmpty()) {
        String host = node.getUri().getHost();
        int port = node.getUri().getPort();
        out.put(
            host + ':' + port,
            cc.getConnectionAsync(host, port).thenCompose(c -> c.async().info()));
      }
    }
    return out;
  }

  /** The masters {@link #info} names, as far as they are known now. */
  List<String> masters() {
    StatefulRedisClusterConnection<String, String> cc = clusterConnection;
    if (cc == null) {
      return cluster == null ? List.of(standaloneName()) : List.of();
    }
    List<String> out = new ArrayList<>();
    for (RedisClusterNode node : cc.getPartitions()) {
      if (node.is(RedisClusterNode.NodeFlag.UPSTREAM) && !node.getSlots().isEmpty()) {
        out.add(node.getUri().getHost() + ':' + node.getUri().getPort());
      }
    }
    return out;
  }

  private String standaloneName() {
    RedisURI u = standalone;
    return u.getSentinelMasterId() != null
        ? "sentinel master " + u.getSentinelMasterId()
        : u.getHost() + ':' + u.getPort();
  }

  /** The master serving {@code slot}, as {@code host:port}, for its breaker. */
  String nodeOf(int slot) {
    StatefulRedisClusterConnection<String, String> c = clusterConnection;
    if (c == null) {
      return describe;
    }
    RedisClusterNode node = c.getPartitions().getPartitionBySlot(slot);
    return node == null ? "slot " + slot : node.getUri().getHost() + ':' + node.getUri().getPort();
  }

  @Override
  public String toString() {
    return describe;
  }

  @Override
  public void close() {
    synchronized (this) {
      closed = true;
    }
    StatefulConnection<String, String> c = connection;
    if (c != null) {
      c.close();
    }
    if (client != null) {
      client.shutdown(Duration.ZERO, Duration.ofSeconds(1));
    } else {
      cluster.shutdown(Duration.ZERO, Duration.ofSeconds(1));
    }
    resources.shutdown(0, 1, TimeUnit.SECONDS).addListener(f -> timer.stop());
  }
}
