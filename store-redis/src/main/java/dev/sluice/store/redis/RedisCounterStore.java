package dev.sluice.store.redis;

import dev.failsafe.CircuitBreaker;
import dev.sluice.Background;
import dev.sluice.spi.CounterBatch;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterUpdate;
import dev.sluice.spi.Counts;
import dev.sluice.spi.SharedValues;
import dev.sluice.spi.StoreClock;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

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
 * #PREVIOUS_CACHE_SIZE} counters at most); slots given back after their window ({@link
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
 * the store is built and every 30 s ({@link #clock()}); knobs and leases live in Redis too ({@link
 * #sharedValues()}). Thread-safe; {@link #close()} closes the connection and its threads.
 */
public final class RedisCounterStore implements CounterStore {

  /** Added to two periods when choosing a window's time to live: room for clock skew. */
  static final long TTL_SLACK_MILLIS = 10_000;

  static final int PREVIOUS_CACHE_SIZE = 100_000;

  /** The count of each counter's last ended window read. */
  final PreviousCounts previous = new PreviousCounts(PREVIOUS_CACHE_SIZE);

  final Keys keys;
  final Connection connection;
  private final Health health;
  private final long timeoutNanos;
  private final long coldTimeoutNanos;
  private final RedisValues values;
  private final RedisClock clock;

  /** Whether Redis has answered a decision of this store. */
  private volatile boolean answered;

  private RedisCounterStore(Builder b) {
    this.keys = new Keys(b.prefix);
    this.timeoutNanos = b.operationTimeout.toNanos();
    this.coldTimeoutNanos = Math.max(timeoutNanos, b.connectTimeout.toNanos());
    this.health = new Health(b.breakerFailures, b.breakerDelay);
    List<RedisURI> uris = new ArrayList<>();
    for (String text : b.uris) {
      // Parsed again for each store: a RedisURI is mutable, and the builder may build again.
      RedisURI copy = Builder.parse(text);
      if (b.username != null || b.password != null) {
        copy.setCredentialsProvider(
            io.lettuce.core.RedisCredentialsProvider.from(
                () ->
                    io.lettuce.core.RedisCredentials.just(
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
            // Lettuce's own timeout only bounds what is left pending; decisions wait less.
            Duration.ofNanos(Math.max(coldTimeoutNanos, TimeUnit.SECONDS.toNanos(1))),
            b.maxReconnectDelay,
            b.scheduler,
            b.trustedCertificates,
            this::reconnected);
    this.values =
        new RedisValues(
            connection,
            keys,
            b.connectTimeout.compareTo(b.operationTimeout) > 0
                ? b.connectTimeout
                : b.operationTimeout);
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
    long deadline = System.nanoTime() + (answered ? timeoutNanos : coldTimeoutNanos);
    Call call = send(updates);
    try {
      long[] out = call.await(deadline);
      answered = true;
      return Counts.of(out);
    } catch (RuntimeException e) {
      call.failed();
      throw e;
    }
  }

  @Override
  public CompletableFuture<Counts> incrementAsync(List<CounterUpdate> updates) {
    Call call;
    try {
      call = send(updates);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    long wait = answered ? timeoutNanos : coldTimeoutNanos;
    return CompletableFuture.allOf(call.futures)
        .orTimeout(wait, TimeUnit.NANOSECONDS)
        .handle(
            (ok, error) -> {
              try {
                long[] out = call.await(System.nanoTime());
                answered = true;
                return Counts.of(out);
              } catch (RuntimeException e) {
                call.failed();
                throw e;
              }
            });
  }

  /**
   * Sends the batch's scripts and returns at once: the counts reach the batch in the thread Redis
   * answered on (or the deadline's), so a reactive adapter's event loop never waits on Redis.
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
    CompletableFuture<Void> unused = decrementAsync(updates);
  }

  @Override
  public CompletableFuture<Void> decrementAsync(List<CounterUpdate> updates) {
    try {
      Map<Integer, List<CounterUpdate>> bySlot = new HashMap<>();
      Map<Integer, List<String>> keysBySlot = new HashMap<>();
      for (CounterUpdate u : updates) {
        String key = keys.key(u);
        int slot = connection.slotOf(key);
        bySlot.computeIfAbsent(slot, s -> new ArrayList<>()).add(u);
        keysBySlot.computeIfAbsent(slot, s -> new ArrayList<>()).add(key);
      }
      List<CompletableFuture<Object>> sent = new ArrayList<>();
      for (Map.Entry<Integer, List<CounterUpdate>> e : bySlot.entrySet()) {
        if (!health.breaker(connection.nodeOf(e.getKey())).isClosed()) {
          continue; // a node that is failing does not get refunds on top
        }
        List<CounterUpdate> us = e.getValue();
        String[] args = new String[us.size()];
        for (int i = 0; i < args.length; i++) {
          args[i] = Long.toString(us.get(i).delta());
        }
        sent.add(
            Script.GIVE_BACK.run(
                connection.commands(),
                ScriptOutputType.INTEGER,
                keysBySlot.get(e.getKey()).toArray(new String[0]),
                args));
      }
      return CompletableFuture.allOf(sent.toArray(new CompletableFuture<?>[0]));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * A lost connection is back: decisions count again at once, not after the breakers' delay (they
   * opened on the calls refused while it was down).
   */
  private void reconnected() {
    health.reset();
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

  @Override
  public void close() {
    if (clock != null) {
      clock.close();
    }
    connection.close();
  }

  @Override
  public String toString() {
    return "redis store " + connection;
  }

  /** The key a counter's window is stored under; for tests and operators. */
  String keyOf(CounterUpdate u) {
    return keys.key(u);
  }

  /**
   * The most a running counter may reach ({@link CounterUpdate#ceiling}): the script stores {@code
   * max(stored, floor) + delta} only up to it, and reports the value either way.
   */
  static long ceiling(CounterUpdate u) {
    return u.ceiling();
  }

  /** A window's time to live: two periods plus slack, in milliseconds. */
  static long ttlMillis(long periodMillis) {
    long two = periodMillis > Long.MAX_VALUE / 4 ? Long.MAX_VALUE / 2 : 2 * periodMillis;
    return two + TTL_SLACK_MILLIS;
  }

  private Call send(List<CounterUpdate> updates) {
    Call call = new Call(updates);
    call.send();
    return call;
  }

  /** One decision's scripts: one per hash slot (one in all off a Cluster), awaited together. */
  private final class Call {
    private final List<CounterUpdate> updates;
    private final String[] names;
    private final long[] known;
    private final boolean[] read;

    /** The counters of each script, by index into {@code updates}. */
    private final List<int[]> groups = new ArrayList<>(1);

    private final List<CircuitBreaker<Object>> breakers = new ArrayList<>(1);
    private final List<String> nodes = new ArrayList<>(1);
    CompletableFuture<?>[] futures;
    private boolean recorded;

    Call(List<CounterUpdate> updates) {
      this.updates = updates;
      int n = updates.size();
      this.names = new String[n];
      this.known = new long[n];
      this.read = new boolean[n];
    }

    void send() {
      int n = updates.size();
      String[] current = new String[n];
      for (int i = 0; i < n; i++) {
        CounterUpdate u = updates.get(i);
        String name = keys.name(u);
        names[i] = name;
        current[i] = u.running() ? name + "tat" : name + u.window();
        if (!u.running()) {
          long cached = u.released() ? PreviousCounts.UNKNOWN : previous.get(name, u.window() - 1);
          if (cached == PreviousCounts.UNKNOWN) {
            read[i] = true;
          } else {
            known[i] = cached;
          }
        }
      }
      if (!connection.isCluster()) {
        int[] all = new int[n];
        for (int i = 0; i < n; i++) {
          all[i] = i;
        }
        groups.add(all);
      } else {
        Map<Integer, List<Integer>> bySlot = new HashMap<>();
        for (int i = 0; i < n; i++) {
          bySlot.computeIfAbsent(connection.slotOf(current[i]), s -> new ArrayList<>()).add(i);
        }
        for (List<Integer> g : bySlot.values()) {
          groups.add(g.stream().mapToInt(Integer::intValue).toArray());
        }
      }
      for (int[] g : groups) {
        String node = connection.nodeOf(connection.slotOf(current[g[0]]));
        nodes.add(node);
        breakers.add(health.breaker(node));
      }
      try {
        health.acquire(breakers, nodes);
      } catch (StoreUnavailableException e) {
        connection.failed();
        throw e;
      }
      futures = new CompletableFuture<?>[groups.size()];
      try {
        for (int gi = 0; gi < groups.size(); gi++) {
          int[] g = groups.get(gi);
          List<String> ks = new ArrayList<>(2 * g.length);
          String[] args = new String[5 * g.length];
          for (int j = 0; j < g.length; j++) {
            int i = g[j];
            CounterUpdate u = updates.get(i);
            ks.add(current[i]);
            args[5 * j] = u.running() ? "r" : read[i] ? "w" : "c";
            if (read[i]) {
              ks.add(names[i] + (u.window() - 1));
            }
            args[5 * j + 1] = Long.toString(u.delta());
            args[5 * j + 2] = Long.toString(ttlMillis(u.periodMillis()));
            args[5 * j + 3] = Long.toString(u.floor());
            args[5 * j + 4] = Long.toString(ceiling(u));
          }
          futures[gi] =
              Script.COUNT.run(
                  connection.commands(), ScriptOutputType.MULTI, ks.toArray(new String[0]), args);
        }
      } catch (RuntimeException e) {
        for (CompletableFuture<?> f : futures) {
          if (f != null) {
            f.cancel(false);
          }
        }
        failed();
        throw new StoreUnavailableException("redis scripts could not be sent: " + e);
      }
    }

    long[] await(long deadline) {
      long[] out = new long[2 * updates.size()];
      RuntimeException failure = null;
      previous.makeRoom(updates.size());
      for (int gi = 0; gi < groups.size(); gi++) {
        try {
          List<?> reply = get(futures[gi], deadline);
          int[] g = groups.get(gi);
          for (int j = 0; j < g.length; j++) {
            int i = g[j];
            out[2 * i] = number(reply.get(2 * j));
            if (read[i]) {
              long p = number(reply.get(2 * j + 1));
              out[2 * i + 1] = p;
              if (!updates.get(i).released()) {
                previous.put(names[i], updates.get(i).window() - 1, p);
              }
            } else {
              out[2 * i + 1] = known[i];
            }
          }
          health.succeeded(breakers.get(gi));
        } catch (RuntimeException e) {
          health.failed(breakers.get(gi));
          connection.failed();
          failure = e;
        }
      }
      recorded = true;
      if (failure != null) {
        throw failure;
      }
      return out;
    }

    /** Answers every breaker whose permit was taken and not yet answered. */
    void failed() {
      if (!recorded) {
        recorded = true;
        breakers.forEach(health::failed);
      }
    }

    private List<?> get(CompletableFuture<?> f, long deadline) {
      try {
        long wait = deadline - System.nanoTime();
        Object r = wait > 0 || f.isDone() ? f.get(Math.max(0, wait), TimeUnit.NANOSECONDS) : null;
        if (r == null) {
          throw new TimeoutException();
        }
        return (List<?>) r;
      } catch (TimeoutException e) {
        throw StoreUnavailableException.unconfirmed(
            "redis did not answer within the operation timeout");
      } catch (ExecutionException | CompletionException e) {
        Throwable cause = e.getCause() == null ? e : e.getCause();
        throw StoreUnavailableException.unconfirmed("redis failed: " + cause);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw StoreUnavailableException.unconfirmed("interrupted while waiting for redis");
      }
    }
  }

  private static long number(Object o) {
    if (o instanceof Long l) {
      return l;
    }
    return Long.parseLong(o.toString());
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

    /** This host's clock, which Redis's is measured against; the system clock by default. */
    public Builder clock(InstantSource clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * Whether limiters on this store decide on Redis's clock (true, the default), so instances
     * whose hosts' clocks disagree still share each window and each token bucket's arrival times.
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
