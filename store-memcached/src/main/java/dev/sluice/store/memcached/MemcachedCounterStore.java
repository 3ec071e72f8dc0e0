package dev.sluice.store.memcached;

import dev.sluice.Background;
import dev.sluice.spi.CounterBatch;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterUpdate;
import dev.sluice.spi.Counts;
import dev.sluice.spi.SharedValues;
import dev.sluice.spi.StoreClock;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import net.spy.memcached.AddrUtil;
import net.spy.memcached.ConnectionFactoryBuilder;
import net.spy.memcached.DefaultHashAlgorithm;
import net.spy.memcached.FailureMode;
import net.spy.memcached.MemcachedClient;
import net.spy.memcached.internal.OperationFuture;

/**
 * Counters in Memcached, shared by every instance of a fleet.
 *
 * <p>One decision is one round trip (a token bucket's counter: see {@link RunningLines}): every
 * increment of the batch ({@code incr} with a default and an expiry, one operation in the binary
 * protocol) and the gets of the previous windows are queued together and travel pipelined on the
 * same connection, whatever the number of tiers and rules. A previous window has ended by the time
 * anyone asks for it, so its count is read once per instance and remembered for the rest of the
 * current window, one entry per counter that the next window's read replaces (bounded, {@value
 * #PREVIOUS_CACHE_SIZE} counters): most decisions then send only their increments. An instance
 * whose clock lags can still add to a window after this one read it; that error is bounded by the
 * clock skew. Keys are {@code {prefix}:{rule}:{identity}:{period}:w1.{window}} ({@code w1} the
 * value's format) with unsafe or long parts replaced by a digest (no raw caller data reaches the
 * wire); windows live two periods plus slack, and a TTL over 30 days is sent as an absolute Unix
 * time, as memcached requires.
 *
 * <p>A request path never waits long: the batch gets one deadline ({@link
 * Builder#operationTimeout}, 50 ms by default), operations are never queued behind a full queue,
 * and operations for a node that is down are cancelled at once. A circuit breaker per node stops
 * calling a node after repeated failures and lets a probe through after a delay ({@link
 * NodeHealth}); a node whose connection is lost is probed every few milliseconds and reconnected as
 * soon as it accepts ({@link Connection}), so a restarted memcached counts again within tens of
 * milliseconds. Failures surface as exceptions from {@link #increment}, which the limiter turns
 * into failed-open (or failed-closed) decisions. Only a counter's own node matters: when the node
 * holding a previous window does not answer, the decision goes on as if that window were empty.
 *
 * <p>Each server's evictions (items memcached dropped for lack of memory, counters among them) are
 * read from its {@code stats} every 10 s in the background, reported by {@link #evictions()} and
 * logged when they start.
 *
 * <p>Several servers are spread by Ketama consistent hashing. Thread-safe; {@link #close()} shuts
 * the client down.
 */
public final class MemcachedCounterStore implements CounterStore {

  /** Added to two periods when choosing a window's TTL: room for clock skew between instances. */
  static final long TTL_SLACK_SECONDS = 10;

  /** Memcached reads an expiry beyond this many seconds as an absolute Unix time. */
  static final long MAX_RELATIVE_TTL = 60L * 60 * 24 * 30;

  static final int PREVIOUS_CACHE_SIZE = 100_000;

  /** The count of each counter's last ended window read. */
  final PreviousCounts previous = new PreviousCounts(PREVIOUS_CACHE_SIZE);

  /** Running counters (a token bucket's arrival time), moved by compare-and-set. */
  final RunningLines lines;

  private final Connection connection;
  final Keys keys;
  private final long timeoutNanos;

  /** How long a decision waits until memcached has answered this store once ({@link #deadline}). */
  private final long coldTimeoutNanos;

  /** Whether memcached has answered a decision of this store. */
  private volatile boolean answered;

  final InstantSource clock;

  /** Where an asynchronous increment's deadline is kept. */
  private final ScheduledExecutorService scheduler;

  final NodeHealth health;
  private final MemcachedValues values;
  private final EvictionWatch evictions;

  /** Memcached's clock, measured in the background; null when turned off. */
  private final MemcachedClock storeClock;

  private final String servers;
  final boolean bulkGets;

  /** The server when there is only one, else null. */
  private final SocketAddress singleNode;

  private MemcachedCounterStore(Builder b) throws IOException {
    SpyLogging.install();
    this.keys = new Keys(b.prefix);
    this.servers = b.servers.toString();
    this.bulkGets = b.bulkGets;
    this.health = new NodeHealth(b.breakerFailures, b.breakerDelay, this::nodeOf);
    this.timeoutNanos = b.operationTimeout.toNanos();
    this.coldTimeoutNanos = Math.max(timeoutNanos, b.connectTimeout.toNanos());
    this.clock = b.clock;
    this.scheduler = b.scheduler;
    // A round abandoned as stuck only once no decision could still be waiting on it.
    this.lines =
        new RunningLines(this, PREVIOUS_CACHE_SIZE, Math.max(2 * coldTimeoutNanos, 1_000_000_000L));
    long opTimeout = Math.max(1, b.operationTimeout.toMillis());
    long maxReconnect = Math.max(1, b.maxReconnectDelay.toSeconds());
    int timeoutThreshold = b.timeoutExceptionThreshold;
    this.connection =
        new Connection(
            () ->
                new ConnectionFactoryBuilder()
                    .setProtocol(ConnectionFactoryBuilder.Protocol.BINARY)
                    .setLocatorType(ConnectionFactoryBuilder.Locator.CONSISTENT)
                    .setHashAlg(DefaultHashAlgorithm.KETAMA_HASH)
                    .setOpTimeout(opTimeout)
                    .setOpQueueMaxBlockTime(0)
                    .setFailureMode(FailureMode.Cancel)
                    .setMaxReconnectDelay(maxReconnect)
                    .setTimeoutExceptionThreshold(timeoutThreshold)
                    .setUseNagleAlgorithm(false)
                    .setDaemon(true),
            b.servers,
            b.connectTimeout.toMillis(),
            health,
            b.scheduler);
    this.values = new MemcachedValues(connection, b.prefix, b.operationTimeout);
    this.evictions =
        new EvictionWatch(
            connection::client,
            b.servers,
            b.scheduler,
            b.statsClock,
            b.statsInterval.toMillis(),
            b.evictionQuiet.toMillis());
    this.storeClock =
        b.storeClock
            ? MemcachedClock.acquire(
                b.servers,
                b.clock,
                // A probe waits briefly: its steps share the store's scheduler.
                (int) Math.max(100, Math.min(500, b.connectTimeout.toMillis())),
                b.clockAlignSeconds,
                b.scheduler,
                // The first tick comes within a second; a store decides on it from its first call.
                Math.min(1_500, Math.max(1, b.connectTimeout.toMillis())))
            : null;
    this.singleNode =
        b.servers.size() == 1
            ? client().getNodeLocator().getAll().iterator().next().getSocketAddress()
            : null;
  }

  public static Builder builder() {
    return new Builder();
  }

  @Override
  public Counts increment(List<CounterUpdate> updates) {
    long deadline = deadline();
    Batch batch = send(updates);
    try {
      return answered(batch.await(deadline));
    } catch (RuntimeException e) {
      batch.failed();
      throw e;
    }
  }

  /**
   * When a decision stops waiting: the operation timeout from now, or, until memcached has answered
   * this store once, the connect timeout (at least the operation timeout). A cold instance's first
   * calls (a connection still settling, code not yet compiled) take longer than a warm one's;
   * failing them over to {@code onStoreFailure} would let a deploy's first burst through uncounted.
   */
  private long deadline() {
    return System.nanoTime() + (answered ? timeoutNanos : coldTimeoutNanos);
  }

  private Counts answered(long[] counts) {
    if (!answered) {
      answered = true;
    }
    return Counts.of(counts);
  }

  /**
   * Sends the batch's operations and returns at once: no thread waits on memcached. Each
   * operation's answer is heard through spymemcached's completion listeners, and once the last has
   * come the counts are read from them in spymemcached's listener thread, which completes the
   * future (and runs whatever the caller chained to it). The operation timeout bounds it as it
   * bounds {@link #increment}: at the deadline, the store's scheduler fails what has not answered.
   * The rare follow-up operations (another instance creating the key at the same moment, a token
   * bucket's compare-and-set) are awaited in that listener thread, under the same deadline.
   */
  @Override
  public CompletableFuture<Counts> incrementAsync(List<CounterUpdate> updates) {
    long deadline = deadline();
    Batch batch;
    try {
      batch = send(updates);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    CompletableFuture<Counts> result = new CompletableFuture<>();
    AtomicBoolean taken = new AtomicBoolean();
    Runnable finish =
        () -> {
          if (!taken.compareAndSet(false, true)) {
            return;
          }
          try {
            result.complete(answered(batch.await(deadline)));
          } catch (RuntimeException e) {
            batch.failed();
            result.completeExceptionally(e);
          }
        };
    try {
      ScheduledFuture<?> timer =
          scheduler.schedule(finish, deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
      Answers.whenAll(
          batch.sent(),
          () -> {
            timer.cancel(false);
            finish.run();
          });
    } catch (RuntimeException e) {
      if (taken.compareAndSet(false, true)) {
        batch.failed();
        result.completeExceptionally(
            StoreUnavailableException.unconfirmed(
                "memcached operations could not be awaited: " + e));
      }
    }
    return result;
  }

  /**
   * {@link #incrementAsync(List)}, its counts reported to the batch before the future completes.
   */
  @Override
  public CompletableFuture<Void> incrementAsync(CounterBatch batch) {
    int n = batch.size();
    return incrementAsync(batch.updates())
        .thenAccept(
            counts -> {
              for (int i = 0; i < n; i++) {
                batch.counted(i, counts.current(i), counts.previous(i));
              }
            });
  }

  @Override
  public void decrement(List<CounterUpdate> updates) {
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
  }

  @Override
  public void close() {
    evictions.close();
    if (storeClock != null) {
      storeClock.release();
    }
    health.closing();
    connection.close();
  }

  /**
   * Each server's evictions ({@code host:port} as given to the builder) since this store was built,
   * from memcached's {@code stats}, read every 10 s in the background. An evicted counter starts
   * again from zero: its client may get up to its limit again in that window. The start of
   * evictions on a node is logged once at WARN (again after 10 minutes without any).
   */
  @Override
  public java.util.Map<String, Long> evictions() {
    return evictions.evictions();
  }

  /** Knobs and leases, shared by every instance on these servers (and this prefix). */
  @Override
  public java.util.Optional<SharedValues> sharedValues() {
    return java.util.Optional.of(values);
  }

  /**
   * Memcached's clock, measured against this host's in the background (once a minute, at the same
   * tick of memcached's clock as every other instance), which limiters on this store decide on
   * unless given a clock of their own; empty when {@link Builder#storeClock} is off.
   */
  @Override
  public java.util.Optional<StoreClock> clock() {
    return java.util.Optional.ofNullable(storeClock);
  }

  /** The key a counter's window is stored under; for tests and operators. */
  String keyOf(CounterUpdate u) {
    return keys.key(u);
  }

  /** How many connections this store has opened, reconnections included; for tests. */
  int connectionsOpened() {
    return connection.opened();
  }

  /** The current client: a call reads it once and uses it throughout. */
  MemcachedClient client() {
    return connection.client();
  }

  /** Whether the breaker of {@code key}'s node is open (calls to it are skipped). */
  boolean breakerOpen(String key) {
    return health.breaker(key).isOpen();
  }

  @Override
  public String toString() {
    return "memcached store " + servers;
  }

  /** Expiry for a window of {@code periodMillis}: two periods plus slack, absolute past 30 days. */
  int expiry(long periodMillis) {
    long seconds = Math.floorDiv(2 * periodMillis + 999, 1000) + TTL_SLACK_SECONDS;
    if (seconds > MAX_RELATIVE_TTL) {
      seconds += clock.millis() / 1000;
    }
    return (int) Math.min(Integer.MAX_VALUE, seconds);
  }

  private Batch send(List<CounterUpdate> updates) {
    Batch batch = new Batch(this, updates);
    batch.send();
    return batch;
  }

  SocketAddress nodeOf(String key) {
    if (singleNode != null) {
      return singleNode; // one server: no need to hash the key (Ketama's MD5) to find it
    }
    return client().getNodeLocator().getPrimary(key).getSocketAddress();
  }

  /** {@code incr} by the update's delta; a key memcached does not hold is created at the delta. */
  OperationFuture<Long> incr(String key, CounterUpdate u) {
    return client().asyncIncr(key, u.delta(), u.delta(), expiry(u.periodMillis()));
  }

  /** Configures a {@link MemcachedCounterStore}. */
  public static final class Builder {
    private List<InetSocketAddress> servers = List.of();
    private String prefix = "sluice";
    private Duration operationTimeout = Duration.ofMillis(50);
    private Duration maxReconnectDelay = Duration.ofSeconds(1);
    private Duration connectTimeout = Duration.ofSeconds(2);
    private int timeoutExceptionThreshold = 100;
    private int breakerFailures = 20;
    private Duration breakerDelay = Duration.ofSeconds(1);
    private InstantSource clock = InstantSource.system();
    private boolean bulkGets = true;
    private boolean storeClock = true;
    private int clockAlignSeconds = MemcachedClock.ALIGN_SECONDS;
    private ScheduledExecutorService scheduler = Background.shared();
    private Duration statsInterval = Duration.ofMillis(EvictionWatch.DEFAULT_INTERVAL_MILLIS);
    private Duration evictionQuiet = Duration.ofMillis(EvictionWatch.QUIET_MILLIS);
    private LongSupplier statsClock = () -> System.nanoTime() / 1_000_000;

    private Builder() {}

    /** How often each server's {@code stats} are read for evictions; 10 s by default. */
    Builder statsInterval(Duration interval) {
      if (interval.toMillis() < 1) {
        throw new IllegalArgumentException("statsInterval must be at least 1ms");
      }
      this.statsInterval = interval;
      return this;
    }

    /** How long a server must not evict before its next eviction is logged again; 10 min. */
    Builder evictionQuiet(Duration quiet) {
      this.evictionQuiet = Objects.requireNonNull(quiet, "quiet");
      return this;
    }

    /** What times the quiet period, in monotonic milliseconds; for tests. */
    Builder statsClock(LongSupplier millis) {
      this.statsClock = Objects.requireNonNull(millis, "millis");
      return this;
    }

    /** Servers as {@code host:port host:port} or {@code host:port,host:port}. */
    public Builder servers(String servers) {
      Objects.requireNonNull(servers, "servers");
      List<InetSocketAddress> list = AddrUtil.getAddresses(servers.replace(',', ' ').trim());
      return servers(list);
    }

    public Builder servers(List<InetSocketAddress> servers) {
      if (servers.isEmpty()) {
        throw new IllegalArgumentException("servers must not be empty");
      }
      this.servers = List.copyOf(servers);
      return this;
    }

    /**
     * The first part of every key, so several applications can share a cluster. "sluice" by
     * default.
     */
    public Builder prefix(String prefix) {
      new Keys(prefix);
      this.prefix = prefix;
      return this;
    }

    /**
     * The most one decision waits for memcached; 50 ms by default. Until memcached has answered the
     * store once, a decision waits up to the connect timeout instead, so a cold instance counts its
     * first requests rather than failing them over to {@code onStoreFailure}.
     */
    public Builder operationTimeout(Duration timeout) {
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
    public Builder connectTimeout(Duration timeout) {
      if (timeout.isNegative()) {
        throw new IllegalArgumentException("connectTimeout must be >= 0");
      }
      this.connectTimeout = timeout;
      return this;
    }

    /** The longest pause between reconnection attempts to a lost server; 1 s by default. */
    public Builder maxReconnectDelay(Duration delay) {
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
    public Builder circuitBreaker(int failures, Duration delay) {
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

    /**
     * The clock used to turn TTLs over 30 days into absolute times; the system clock by default.
     */
    public Builder clock(InstantSource clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * Whether limiters on this store decide on memcached's clock (true, the default): the store
     * measures it against this host's clock at start and every minute, so that instances whose
     * hosts' clocks disagree still share each window (docs/RELIABILITY.md, "One clock"). Off, each
     * instance decides on its host's clock, and a fleet's limits hold only as well as its clocks
     * agree.
     */
    public Builder storeClock(boolean on) {
      this.storeClock = on;
      return this;
    }

    /** Measures the clock at every tick into a multiple of {@code seconds}; for tests. */
    Builder clockAlignSeconds(int seconds) {
      this.clockAlignSeconds = seconds;
      return this;
    }

    /**
     * Whether the previous windows a batch needs are read with one multiget per node (true, the
     * default) or one get per key. The difference is measured in docs/BENCHMARKS.md.
     */
    public Builder bulkGets(boolean bulkGets) {
      this.bulkGets = bulkGets;
      return this;
    }

    /**
     * Where a lost node is probed and its replacement connection awaited: the JVM's {@link
     * Background#shared()} scheduler by default.
     */
    public Builder scheduler(ScheduledExecutorService scheduler) {
      this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
      return this;
    }

    /**
     * Connects, waiting up to the connect timeout; an unreachable server does not fail the build,
     * its calls fail open until it answers.
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
}
