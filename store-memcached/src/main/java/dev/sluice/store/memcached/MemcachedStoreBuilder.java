package dev.sluice.store.memcached;

import dev.sluice.Background;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.LongSupplier;
import net.spy.memcached.AddrUtil;

/** Configures a {@link MemcachedCounterStore}: servers, keys, timeouts, breaker and clock. */
public final class MemcachedStoreBuilder {
  List<InetSocketAddress> servers = List.of();
  String prefix = "sluice";
  Duration operationTimeout = Duration.ofMillis(50);
  Duration maxReconnectDelay = Duration.ofSeconds(1);
  Duration connectTimeout = Duration.ofSeconds(2);
  int timeoutExceptionThreshold = 100;
  int breakerFailures = 20;
  Duration breakerDelay = Duration.ofSeconds(1);
  InstantSource clock = InstantSource.system();
  boolean bulkGets = true;
  boolean storeClock = true;
  int clockAlignSeconds = MemcachedClock.ALIGN_SECONDS;
  ScheduledExecutorService scheduler = Background.shared();
  Duration statsInterval = Duration.ofMillis(EvictionWatch.DEFAULT_INTERVAL_MILLIS);
  Duration evictionQuiet = Duration.ofMillis(EvictionWatch.QUIET_MILLIS);
  LongSupplier statsClock = () -> System.nanoTime() / 1_000_000;

  MemcachedStoreBuilder() {}

  /** How often each server's {@code stats} are read for evictions; 10 s by default. */
  MemcachedStoreBuilder statsInterval(Duration interval) {
    if (interval.toMillis() < 1) {
      throw new IllegalArgumentException("statsInterval must be at least 1ms");
    }
    this.statsInterval = interval;
    return this;
  }

  /** How long a server must not evict before its next eviction is logged again; 10 min. */
  MemcachedStoreBuilder evictionQuiet(Duration quiet) {
    this.evictionQuiet = Objects.requireNonNull(quiet, "quiet");
    return this;
  }

  /** What times the quiet period, in monotonic milliseconds; for tests. */
  MemcachedStoreBuilder statsClock(LongSupplier millis) {
    this.statsClock = Objects.requireNonNull(millis, "millis");
    return this;
  }

  /** Servers as {@code host:port host:port} or {@code host:port,host:port}. */
  public MemcachedStoreBuilder servers(String servers) {
    Objects.requireNonNull(servers, "servers");
    List<InetSocketAddress> list = AddrUtil.getAddresses(servers.replace(',', ' ').trim());
    return servers(list);
  }

  public MemcachedStoreBuilder servers(List<InetSocketAddress> servers) {
    if (servers.isEmpty()) {
      throw new IllegalArgumentException("servers must not be empty");
    }
    this.servers = List.copyOf(servers);
    return this;
  }

  /**
   * The first part of every key, so several applications can share a cluster. "sluice" by default.
   */
  public MemcachedStoreBuilder prefix(String prefix) {
    new Keys(prefix);
    this.prefix = prefix;
    return this;
  }

  /**
   * The most one decision waits for memcached; 50 ms by default. Until memcached has answered the
   * store once, a decision waits up to the connect timeout instead, so a cold instance counts its
   * first requests rather than failing them over to {@code onStoreFailure}.
   */
  public MemcachedStoreBuilder operationTimeout(Duration timeout) {
    if (timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("operationTimeout must be > 0");
    }
    this.operationTimeout = timeout;
    return this;
  }

  /**
   * How long {@link #build()} waits for the servers to connect; 2 s by default. A server not
   * connected by then is not an error: its requests fail open until it is.
   */
  public MemcachedStoreBuilder connectTimeout(Duration timeout) {
    if (timeout.isNegative()) {
      throw new IllegalArgumentException("connectTimeout must be >= 0");
    }
    this.connectTimeout = timeout;
    return this;
  }

  /** The longest pause between reconnection attempts to a lost server; 1 s by default. */
  public MemcachedStoreBuilder maxReconnectDelay(Duration delay) {
    if (delay.toSeconds() < 1) {
      throw new IllegalArgumentException("maxReconnectDelay must be >= 1s");
    }
    this.maxReconnectDelay = delay;
    return this;
  }

  /**
   * The breaker of a node opens after this many failed decisions in a row and lets one probe
   * through after {@code delay}; 20 and 1 s by default.
   */
  public MemcachedStoreBuilder circuitBreaker(int failures, Duration delay) {
    if (failures <= 0) {
      throw new IllegalArgumentException("failures must be > 0");
    }
    if (delay.isNegative() || delay.isZero()) {
      throw new IllegalArgumentException("delay must be > 0");
    }
    this.breakerFailures = failures;
    this.breakerDelay = delay;
    return this;
  }

  /** The clock used to turn TTLs over 30 days into absolute times; the system clock by default. */
  public MemcachedStoreBuilder clock(InstantSource clock) {
    this.clock = Objects.requireNonNull(clock, "clock");
    return this;
  }

  /**
   * Whether limiters on this store decide on memcached's clock (true, the default): the store
   * measures it against this host's clock at start and every minute, so that instances whose hosts'
   * clocks disagree still share each window (docs/RELIABILITY.md, "One clock"). Off, each instance
   * decides on its host's clock, and a fleet's limits hold only as well as its clocks agree.
   */
  public MemcachedStoreBuilder storeClock(boolean on) {
    this.storeClock = on;
    return this;
  }

  /** Measures the clock at every tick into a multiple of {@code seconds}; for tests. */
  MemcachedStoreBuilder clockAlignSeconds(int seconds) {
    this.clockAlignSeconds = seconds;
    return this;
  }

  /**
   * Whether the previous windows a batch needs are read with one multiget per node (true, the
   * default) or one get per key. The difference is measured in docs/BENCHMARKS.md.
   */
  public MemcachedStoreBuilder bulkGets(boolean bulkGets) {
    this.bulkGets = bulkGets;
    return this;
  }

  /**
   * Where a lost node's replacement connection is awaited (the probes themselves run on the store's
   * own thread, as they block while they wait): the JVM's {@link Background#shared()} scheduler by
   * default.
   */
  public MemcachedStoreBuilder scheduler(ScheduledExecutorService scheduler) {
    this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
    return this;
  }

  /**
   * Connects, waiting up to the connect timeout; an unreachable server does not fail the build, its
   * calls fail open until it answers.
   *
   * @throws IllegalArgumentException if no server was given
   */
  public MemcachedCounterStore build() {
    if (servers.isEmpty()) {
      throw new IllegalArgumentException("servers must not be empty");
    }
    try {
      return new MemcachedCounterStore(this);
    } catch (IOException e) {
      throw new IllegalStateException("cannot create the memcached client: " + e.getMessage(), e);
    }
  }
}
