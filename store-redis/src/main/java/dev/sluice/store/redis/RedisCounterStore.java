package dev.sluice.store.redis;

import dev.sluice.Background;
import dev.sluice.spi.CounterBatch;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterUpdate;
import dev.sluice.spi.Counts;
import dev.sluice.spi.SharedValues;
import dev.sluice.spi.StoreClock;
import io.lettuce.core.RedisCredentials;
import io.lettuce.core.RedisCredentialsProvider;
import io.lettuce.core.RedisURI;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Counters in Redis, shared by every instance of a fleet: a standalone server, a Sentinel group, or
 * a Cluster, through Lettuce.
 *
 * <p>One decision is one round trip whatever the number of limits: a Lua script (called by its
 * SHA-1, sent whole only to a server that answers {@code NOSCRIPT}) increments every window of the
 * decision with its expiry, reads each previous window this instance does not already know, and
 * moves each running counter (a token bucket's arrival time) to {@code max(stored, floor) + delta},
 * all atomically on the server. A previous window has ended by the time anyone asks for it, so its
 * count is read once per instance and remembered for the rest of the current window ({@value
 * Counting#PREVIOUS_CACHE_SIZE} counters at most); slots given back after their window ({@link
 * CounterUpdate#released}) are read every time. On a Cluster every key carries its identity as a
 * hash tag, so one client's counters share a slot; a decision whose counters fall in several slots
 * sends one script per slot, all at once, and waits for them together: one round trip of wall time.
 * Refunds and releases are a second script that never takes a count below zero and never recreates
 * a key Redis has dropped. Counts saturate at {@link Long#MAX_VALUE}.
 *
 * <p>A request path never waits long: a decision gets one deadline ({@link
 * Builder#operationTimeout}, 50 ms by default; until Redis has answered this store once, the
 * connect timeout), commands fail at once while the connection is down instead of queueing, and a
 * circuit breaker per master stops calling it after repeated failures and lets a probe through
 * after a delay. Lettuce reconnects after a pause that grows to at most {@link
 * Builder#maxReconnectDelay} (50 ms by default), asks the sentinels for the new master after a
 * failover, and refreshes a Cluster's topology when a slot moves. Failures surface as exceptions
 * from {@link #increment}, which the limiter turns into failed-open (or failed-closed) decisions.
 *
 * <p>The store's clock is Redis's ({@code TIME}, microseconds), measured against this host's when
 * the store is built and every 30 s ({@link #clock()}); a token bucket's arrival time is moved in
 * the script itself, on the {@code TIME} Redis reads there ({@link Builder#storeClock}). Knobs and
 * leases live in Redis too ({@link #sharedValues()}). Thread-safe; {@link #close()} closes the
 * connection and its threads.
 */
public final class RedisCounterStore implements CounterStore {

  final Keys keys;
  final Connection connection;
  final Counting counting;

  private final RedisValues values;
  private final RedisClock clock;
  private final EvictionWatch evictions;

  private RedisCounterStore(Builder b) {
    this.keys = new Keys(b.prefix);
    long timeoutNanos = b.operationTimeout.toNanos();
    long coldTimeoutNanos = Math.max(timeoutNanos, b.connectTimeout.toNanos());
    Health health = new Health(b.breakerFailures, b.breakerDelay, this::answered, b.scheduler);
    List<RedisURI> uris = new ArrayList<>();
    for (String text : b.uris) {
      // Parsed again for each store: a RedisURI is mutable, and the builder may build again.
      RedisURI copy = Builder.parse(text);
      if (b.username != null || b.password != null) {
        copy.setCredentialsProvider(
            RedisCredentialsProvider.from(
                () ->
                    RedisCredentials.just(
                        b.username, b.password == null ? null : b.password.toCharArray())));
      }
      if (b.tls || b.trustedCertificates != null) {
        copy.setSsl(true);
      }
      uris.add(copy);
    }
    this.connection =
        new Connection(
            uris,
            b.cluster,
            b.connectTimeout,
            // Lettuce's own timeout bounds probes, values and refunds; a decision's script is
            // bounded by the decision's deadline alone.
            Duration.ofNanos(Math.max(coldTimeoutNanos, TimeUnit.SECONDS.toNanos(1))),
            b.maxReconnectDelay,
            b.scheduler,
            b.trustedCertificates,
            // A lost connection is back: decisions count again at once, not after the breakers'
            // delay (they opened on the calls refused while it was down).
            health::reset);
    this.counting =
        new Counting(keys, connection, health, b.storeClock, timeoutNanos, coldTimeoutNanos);
    this.values =
        new RedisValues(
            connection,
            keys,
            b.connectTimeout.compareTo(b.operationTimeout) > 0
                ? b.connectTimeout
                : b.operationTimeout);
    this.evictions =
        new EvictionWatch(
            connection::info,
            connection::masters,
            b.scheduler,
            () -> System.nanoTime() / 1_000_000,
            b.statsInterval.toMillis(),
            EvictionWatch.QUIET_MILLIS);
    this.clock =
        b.storeClock
            ? new RedisClock(
                connection,
                b.clock,
                b.scheduler,
                30_000,
                Math.max(100, Math.min(1_000, b.connectTimeout.toMillis())))
            : null;
  }

  public static Builder builder() {
    return new Builder();
  }

  @Override
  public Counts increment(List<CounterUpdate> updates) {
    long[] counts = new long[2 * updates.size()];
    counting.increment(CounterBatch.of(updates, counts));
    return Counts.of(counts);
  }

  /** Reads the counters from the batch and writes their counts into it, with nothing copied. */
  @Override
  public void increment(CounterBatch batch) {
    counting.increment(batch);
  }

  @Override
  public CompletableFuture<Counts> incrementAsync(List<CounterUpdate> updates) {
    long[] counts = new long[2 * updates.size()];
    return counting
        .incrementAsync(CounterBatch.of(updates, counts))
        .thenApply(v -> Counts.of(counts));
  }

  /**
   * Sends the batch's scripts and returns at once: the counts reach the batch in one of the store's
   * answer threads ({@code sluice-redis-answer-N}), never Lettuce's I/O thread, so a reactive
   * adapter's event loop never waits on Redis and its chain never holds up Redis's other answers. A
   * call that cannot be sent fails at once in the calling thread; a first call's retry that cannot
   * be sent either fails in the JDK's common pool.
   */
  @Override
  public CompletableFuture<Void> incrementAsync(CounterBatch batch) {
    return counting.incrementAsync(batch);
  }

  @Override
  public void decrement(List<CounterUpdate> updates) {
    CompletableFuture<Void> unused = decrementAsync(updates);
  }

  @Override
  public CompletableFuture<Void> decrementAsync(List<CounterUpdate> updates) {
    return counting.decrementAsync(updates);
  }

  /** Knobs and leases, shared by every instance on this Redis (and this prefix). */
  @Override
  public Optional<SharedValues> sharedValues() {
    return Optional.of(values);
  }

  /**
   * Redis's clock ({@code TIME}), measured against this host's when the store is built and every 30
   * s, which limiters on this store decide on unless given a clock of their own; empty when {@link
   * Builder#storeClock} is off.
   */
  @Override
  public Optional<StoreClock> clock() {
    return Optional.ofNullable(clock);
  }

  /**
   * Each master's evictions ({@code host:port}, or {@code sentinel master NAME}) since this store
   * was built: keys Redis dropped for {@code maxmemory} before they expired, counters among them.
   * Read from each master's {@code INFO} every 10 s in the background ({@link
   * Builder#statsInterval}); when a master starts evicting it is logged once at WARN (again after
   * 10 minutes without any), and a master's first answer says at WARN what it does when full.
   */
  @Override
  public java.util.Map<String, Long> evictions() {
    return evictions.evictions();
  }

  @Override
  public void close() {
    evictions.close();
    if (clock != null) {
      clock.close();
    }
    counting.health.close();
    try {
      connection.close();
    } finally {
      counting.close();
    }
  }

  /** Completes when Redis at {@code node} answers; for its breaker. */
  private CompletableFuture<Object> answered(String node) {
    return connection.answered(node);
  }

  @Override
  public String toString() {
    return "redis store " + connection;
  }

  /** The key a counter's window is stored under; for tests and operators. */
  String keyOf(CounterUpdate u) {
    return keys.key(u);
  }

  /** Configures a {@link RedisCounterStore}. */
  public static final class Builder {
    private List<String> uris = List.of();
    private boolean cluster;
    private String prefix = "sluice";
    private String username;
    private String password;
    private boolean tls;
    private java.nio.file.Path trustedCertificates;
    private Duration operationTimeout = Duration.ofMillis(50);
    private Duration connectTimeout = Duration.ofSeconds(2);
    private Duration maxReconnectDelay = Duration.ofMillis(50);
    private int breakerFailures = 20;
    private Duration breakerDelay = Duration.ofSeconds(1);
    private InstantSource clock = InstantSource.system();
    private boolean storeClock = true;
    private Duration statsInterval = Duration.ofMillis(EvictionWatch.DEFAULT_INTERVAL_MILLIS);
    private ScheduledExecutorService scheduler = Background.shared();

    private Builder() {}

    /**
     * One Redis: {@code host:port}, or a URI such as {@code redis://user:secret@host:6379/0},
     * {@code rediss://host:6380} (TLS) or {@code
     * redis-sentinel://secret@s1:26379,s2:26379/0#mymaster} (the master named {@code mymaster} of
     * the sentinels given, followed through failovers).
     */
    public Builder uri(String uri) {
      Objects.requireNonNull(uri, "uri");
      parse(uri.trim());
      this.uris = List.of(uri.trim());
      this.cluster = false;
      return this;
    }

    /**
     * A Redis Cluster, from some of its nodes: {@code host:port,host:port} or URIs separated by
     * commas; the rest of the topology is discovered and kept up to date.
     */
    public Builder cluster(String nodes) {
      Objects.requireNonNull(nodes, "nodes");
      List<String> list = new ArrayList<>();
      for (String s : java.util.regex.Pattern.compile("[,\\s]+").splitAsStream(nodes).toList()) {
        if (!s.isBlank()) {
          parse(s.trim());
          list.add(s.trim());
        }
      }
      if (list.isEmpty()) {
        throw new IllegalArgumentException("cluster nodes must not be empty");
      }
      this.uris = List.copyOf(list);
      this.cluster = true;
      return this;
    }

    private static RedisURI parse(String s) {
      try {
        return RedisURI.create(s.contains("://") ? s : "redis://" + s);
      } catch (RuntimeException e) {
        throw new IllegalArgumentException("bad redis address '" + s + "': " + e.getMessage(), e);
      }
    }

    /** An ACL user and password (or, with a null user, the {@code requirepass} password). */
    public Builder credentials(String username, String password) {
      this.username = username;
      this.password = Objects.requireNonNull(password, "password");
      return this;
    }

    /** TLS on every connection, as a {@code rediss://} URI asks. */
    public Builder tls(boolean on) {
      this.tls = on;
      return this;
    }

    /**
     * The certificates (PEM) a TLS connection trusts, such as a private CA's that signed the Redis
     * server's certificate; the JDK's trust store by default. Implies {@link #tls TLS}. The
     * server's name or address is checked against its certificate either way.
     */
    public Builder trustedCertificates(java.nio.file.Path pem) {
      if (!java.nio.file.Files.isReadable(pem)) {
        throw new IllegalArgumentException("trustedCertificates: cannot read " + pem);
      }
      this.trustedCertificates = pem;
      return this;
    }

    /** The first part of every key, so several applications can share a Redis; "sluice". */
    public Builder prefix(String prefix) {
      new Keys(prefix);
      this.prefix = prefix;
      return this;
    }

    /**
     * The most one decision waits for Redis; 50 ms by default. Until Redis has answered the store
     * once, a decision waits up to the connect timeout instead, so a cold instance counts its first
     * requests rather than failing them over to {@code onStoreFailure}.
     */
    public Builder operationTimeout(Duration timeout) {
      if (timeout.isNegative() || timeout.isZero()) {
        throw new IllegalArgumentException("operationTimeout must be > 0");
      }
      this.operationTimeout = timeout;
      return this;
    }

    /**
     * How long {@link #build()} waits to connect; 2 s by default. A Redis not reachable by then is
     * not an error: its calls fail until it answers.
     */
    public Builder connectTimeout(Duration timeout) {
      if (timeout.isNegative() || timeout.isZero()) {
        throw new IllegalArgumentException("connectTimeout must be > 0");
      }
      this.connectTimeout = timeout;
      return this;
    }

    /** The longest pause between reconnection attempts to a lost Redis; 50 ms by default. */
    public Builder maxReconnectDelay(Duration delay) {
      if (delay.toMillis() < 1) {
        throw new IllegalArgumentException("maxReconnectDelay must be >= 1ms");
      }
      this.maxReconnectDelay = delay;
      return this;
    }

    /**
     * The breaker of a master opens after this many failed decisions in a row and lets one probe
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
     * How often each master's {@code INFO} is read for its evictions and memory policy ({@link
     * RedisCounterStore#evictions()}); 10 s by default.
     */
    public Builder statsInterval(Duration interval) {
      if (interval.toMillis() < 1) {
        throw new IllegalArgumentException("statsInterval must be at least 1ms");
      }
      this.statsInterval = interval;
      return this;
    }

    /** This host's clock, which Redis's is measured against; the system clock by default. */
    public Builder clock(InstantSource clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * Whether limiters on this store decide on Redis's clock (true, the default), so instances
     * whose hosts' clocks disagree still share each window and each token bucket's arrival times.
     * Windows are placed on Redis's clock as measured ({@link #clock()}); a running counter's floor
     * is taken as a time (nanoseconds since 2020-01-01 on the caller's clock, as core's token
     * bucket passes it) and the script moves it and its ceiling onto Redis's own {@code TIME} by
     * the difference, reporting the value moved back: a token bucket is exact on Redis's clock
     * whatever the instances' clocks say. Off, floors are used as given.
     */
    public Builder storeClock(boolean on) {
      this.storeClock = on;
      return this;
    }

    /** Where the clock is measured and a first connection retried; {@link Background#shared()}. */
    public Builder scheduler(ScheduledExecutorService scheduler) {
      this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
      return this;
    }

    /**
     * Connects, waiting up to the connect timeout; an unreachable Redis does not fail the build,
     * its calls fail until it answers.
     *
     * @throws IllegalArgumentException if no address was given
     */
    public RedisCounterStore build() {
      if (uris.isEmpty()) {
        throw new IllegalArgumentException("a redis uri or cluster nodes are required");
      }
      return new RedisCounterStore(this);
    }
  }
}
