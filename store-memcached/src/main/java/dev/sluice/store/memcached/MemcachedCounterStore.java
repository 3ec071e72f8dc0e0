package dev.sluice.store.memcached;

import dev.failsafe.CircuitBreaker;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterUpdate;
import dev.sluice.spi.SharedValues;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import net.spy.memcached.AddrUtil;
import net.spy.memcached.CASResponse;
import net.spy.memcached.CASValue;
import net.spy.memcached.ConnectionFactoryBuilder;
import net.spy.memcached.DefaultHashAlgorithm;
import net.spy.memcached.FailureMode;
import net.spy.memcached.MemcachedClient;
import net.spy.memcached.internal.BulkFuture;
import net.spy.memcached.internal.OperationFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Counters in Memcached, shared by every instance of a fleet.
 *
 * <p>One decision is one round trip (two for a token bucket this instance has not seen lately: see
 * {@code runningValues}): every increment of the batch ({@code incr} with a default and an expiry,
 * one operation in the binary protocol) and the gets of the previous windows are queued together
 * and travel pipelined on the same connection, whatever the number of tiers and rules. A previous
 * window has ended by the time anyone asks for it, so its count is read once per instance and
 * remembered for the rest of the current window, one entry per counter that the next window's read
 * replaces (bounded, {@value #PREVIOUS_CACHE_SIZE} counters): most decisions then send only their
 * increments. An instance whose clock lags can still add to a window after this one read it; that
 * error is bounded by the clock skew. Keys are {@code {prefix}:{rule}:{identity}:{period}:{window}}
 * with unsafe or long parts replaced by a digest (no raw caller data reaches the wire); windows
 * live two periods plus slack, and a TTL over 30 days is sent as an absolute Unix time, as
 * memcached requires.
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
 * <p>Several servers are spread by Ketama consistent hashing. Thread-safe; {@link #close()} shuts
 * the client down.
 */
public final class MemcachedCounterStore implements CounterStore {

  private static final Logger LOG = LoggerFactory.getLogger(MemcachedCounterStore.class);

  /** Added to two periods when choosing a window's TTL: room for clock skew between instances. */
  static final long TTL_SLACK_SECONDS = 10;

  /** Memcached reads an expiry beyond this many seconds as an absolute Unix time. */
  static final long MAX_RELATIVE_TTL = 60L * 60 * 24 * 30;

  private static final int CREATION_RACE_RETRIES = 3;

  static final int PREVIOUS_CACHE_SIZE = 100_000;

  /**
   * The count of each counter's last window read, by the counter's key without its window; cleared
   * whole when full (refilled by one get each). One entry per counter, not per window: the table
   * stays as small as the set of active clients, and a lookup stays in cache.
   */
  private final ConcurrentHashMap<String, PreviousCount> previousCounts = new ConcurrentHashMap<>();

  /**
   * The value each running counter (a token bucket's theoretical arrival time) had when this
   * instance last wrote it, by key; cleared whole when full. A counter this instance saw ahead of
   * its floor, or behind it by less than {@link #slack}, is moved by {@code incr} (one round trip);
   * any other (an idle bucket) by {@code gets} and compare-and-set, so an increment never lands on
   * a value left far behind.
   */
  private final ConcurrentHashMap<String, Running> runningValues = new ConcurrentHashMap<>();

  /**
   * A running counter's value as this instance last saw it, and when this instance last renewed its
   * expiry (clock millis).
   */
  private record Running(long value, long renewed) {}

  /** The count of window {@code window} of a counter, which has ended. */
  private record PreviousCount(long window, long count) {}

  private final Connection connection;
  private final Keys keys;
  private final long timeoutNanos;
  private final InstantSource clock;
  private final NodeHealth health;
  private final MemcachedValues values;
  private final String servers;
  private final boolean bulkGets;

  /** The server when there is only one, else null. */
  private final SocketAddress singleNode;

  private MemcachedCounterStore(Builder b) throws IOException {
    SpyLogging.install();
    this.keys = new Keys(b.prefix);
    this.servers = b.servers.toString();
    this.bulkGets = b.bulkGets;
    this.health = new NodeHealth(b.breakerFailures, b.breakerDelay, this::nodeOf);
    this.timeoutNanos = b.operationTimeout.toNanos();
    this.clock = b.clock;
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
            health);
    this.values = new MemcachedValues(connection, b.prefix, b.operationTimeout);
    this.singleNode =
        b.servers.size() == 1
            ? client().getNodeLocator().getAll().iterator().next().getSocketAddress()
            : null;
  }

  public static Builder builder() {
    return new Builder();
  }

  @Override
  public long[] increment(List<CounterUpdate> updates) {
    long deadline = System.nanoTime() + timeoutNanos;
    Batch batch = send(updates);
    try {
      return batch.await(deadline);
    } catch (RuntimeException e) {
      batch.failed();
      throw e;
    }
  }

  @Override
  public CompletableFuture<long[]> incrementAsync(List<CounterUpdate> updates) {
    // spymemcached has no composable futures; a caller wanting async gets the same batch awaited
    // on the common pool, bounded by the operation timeout.
    try {
      Batch batch = send(updates);
      long deadline = System.nanoTime() + timeoutNanos;
      return CompletableFuture.supplyAsync(
          () -> {
            try {
              return batch.await(deadline);
            } catch (RuntimeException e) {
              batch.failed();
              throw e;
            }
          });
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  @Override
  public void decrement(List<CounterUpdate> updates) {
    for (CounterUpdate u : updates) {
      String key = keys.key(u);
      if (u.running()) {
        runningValues.computeIfPresent(
            key, (k, r) -> new Running(r.value() - u.delta(), r.renewed()));
      }
      if (health.breaker(key).isClosed()) {
        // Binary decr never goes below 0, and a missing key stays missing.
        OperationFuture<Long> unused = client().asyncDecr(key, u.delta());
      }
    }
  }

  @Override
  public void close() {
    health.closing();
    connection.close();
  }

  /** Knobs and leases, shared by every instance on these servers (and this prefix). */
  @Override
  public java.util.Optional<SharedValues> sharedValues() {
    return java.util.Optional.of(values);
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
    Batch batch = new Batch(updates);
    batch.send();
    return batch;
  }

  private SocketAddress nodeOf(String key) {
    if (singleNode != null) {
      return singleNode; // one server: no need to hash the key (Ketama's MD5) to find it
    }
    return client().getNodeLocator().getPrimary(key).getSocketAddress();
  }

  /**
   * Queues the reads of the previous windows: one multiget per node when {@link Builder#bulkGets}
   * is on (the default), else one get per key. Per node, not one bulk get for all: a bulk get fails
   * whole when one of its nodes is down, and a previous window may live on another node than its
   * current window.
   */
  private void queueReads(List<String> unknown, Map<String, Future<Object>> gets) {
    if (!bulkGets || unknown.size() < 2) {
      for (String k : unknown) {
        gets.computeIfAbsent(k, client()::asyncGet);
      }
      return;
    }
    Map<SocketAddress, List<String>> byNode = new HashMap<>(4);
    for (String k : unknown) {
      byNode.computeIfAbsent(nodeOf(k), n -> new ArrayList<>()).add(k);
    }
    for (List<String> keysOfNode : byNode.values()) {
      if (keysOfNode.size() == 1) {
        gets.computeIfAbsent(keysOfNode.get(0), client()::asyncGet);
        continue;
      }
      BulkFuture<Map<String, Object>> bulk = client().asyncGetBulk(keysOfNode);
      for (String k : keysOfNode) {
        gets.put(k, new OneOfBulk(bulk, k));
      }
    }
  }

  /** One key's value out of a multiget. */
  private static final class OneOfBulk implements Future<Object> {
    private final BulkFuture<Map<String, Object>> bulk;
    private final String key;

    OneOfBulk(BulkFuture<Map<String, Object>> bulk, String key) {
      this.bulk = bulk;
      this.key = key;
    }

    @Override
    public boolean cancel(boolean mayInterrupt) {
      return bulk.cancel(mayInterrupt);
    }

    @Override
    public boolean isCancelled() {
      return bulk.isCancelled();
    }

    @Override
    public boolean isDone() {
      return bulk.isDone();
    }

    @Override
    public Object get() throws InterruptedException, ExecutionException {
      Map<String, Object> m = bulk.get();
      return m == null ? null : m.get(key);
    }

    @Override
    public Object get(long timeout, TimeUnit unit)
        throws InterruptedException, ExecutionException, TimeoutException {
      Map<String, Object> m = bulk.get(timeout, unit);
      return m == null ? null : m.get(key);
    }
  }

  /** The keys and futures of one decision's operations, awaited under one deadline. */
  private final class Batch {
    final List<CounterUpdate> updates;

    /** Each counter's key: its current window's, or a running counter's one key. */
    final String[] current;

    /** Each window counter's key without its window: the previous-count cache's key. */
    final String[] names;

    /** The previous window's key where its count is read with this batch, else null. */
    final String[] previous;

    /** The previous counts the cache knew; 0 where read with the batch, and for a running one. */
    final long[] known;

    final OperationFuture<Long>[] incrs;

    /**
     * For a running counter: a get-and-touch queued behind its increment when its expiry is due for
     * renewal ({@link #renewDue}), which also reads the value and CAS id a catch-up starts from;
     * or, for one not seen lately and not incremented, the get its compare-and-set starts from.
     */
    final OperationFuture<CASValue<Object>>[] touches;

    /**
     * For a running counter moved by {@code incr}: what was added (its delta, plus any catch-up to
     * the floor), and the value this instance reserved for the request ({@link #reserve}).
     */
    final long[] amounts;

    final long[] reserved;

    /** The reads of the previous windows, by key; most decisions have none. */
    private Map<String, Future<Object>> gets = Map.of();

    /** The breaker of each increment's node. */
    private CircuitBreaker<Object>[] nodes;

    private boolean recorded;

    /** Names the counters, and takes each previous count the cache knows. */
    @SuppressWarnings("unchecked")
    Batch(List<CounterUpdate> updates) {
      int n = updates.size();
      this.updates = updates;
      this.current = new String[n];
      this.names = new String[n];
      this.previous = new String[n];
      this.known = new long[n];
      this.incrs = new OperationFuture[n];
      this.touches = new OperationFuture[n];
      this.amounts = new long[n];
      this.reserved = new long[n];
      for (int i = 0; i < n; i++) {
        CounterUpdate u = updates.get(i);
        if (u.running()) {
          // One value, no previous window to read.
          current[i] = keys.key(u);
          continue;
        }
        String name = keys.name(u);
        names[i] = name;
        current[i] = name + u.window();
        // Slots given back after their window ended lower its count: read it every time.
        PreviousCount cached = u.released() ? null : previousCounts.get(name);
        if (cached != null && cached.window() == u.window() - 1) {
          known[i] = cached.count();
        } else {
          previous[i] = name + (u.window() - 1);
        }
      }
    }

    /** Takes a permit from each node's breaker, and queues the increments and the reads. */
    void send() {
      nodes = health.acquire(current);
      List<String> unknown = List.of();
      for (String key : previous) {
        if (key != null) {
          if (unknown.isEmpty()) {
            unknown = new ArrayList<>(previous.length);
          }
          unknown.add(key);
        }
      }
      if (!unknown.isEmpty()) {
        gets = new HashMap<>(unknown.size() * 2);
      }
      try {
        for (int i = 0; i < incrs.length; i++) {
          CounterUpdate u = updates.get(i);
          if (!u.running()) {
            incrs[i] = incr(current[i], u);
          } else if (reserve(this, i)) {
            if (renewDue(current[i], u)) {
              touches[i] = client().asyncGetAndTouch(current[i], expiry(u.periodMillis()));
            }
          } else {
            touches[i] = client().asyncGets(current[i]);
          }
        }
        queueReads(unknown, gets);
      } catch (RuntimeException e) {
        // Not sent (a full queue, a client shutting down): every permit taken is answered.
        cancel(incrs);
        cancel(touches);
        gets.values().forEach(f -> f.cancel(false));
        NodeHealth.distinct(nodes).forEach(CircuitBreaker::recordFailure);
        throw new StoreUnavailableException("memcached operations could not be sent: " + e);
      }
    }

    long[] await(long deadline) {
      int n = incrs.length;
      long[] out = new long[2 * n];
      // Each node's breaker hears only of its own operations: a dead node must not open a healthy
      // one's breaker because one decision had counters on both.
      List<CircuitBreaker<Object>> failedNodes = List.of();
      StoreUnavailableException failure = null;
      for (int i = 0; i < n; i++) {
        try {
          out[2 * i] = count(i, deadline);
        } catch (StoreUnavailableException e) {
          failure = e;
          if (failedNodes.isEmpty()) {
            failedNodes = new ArrayList<>(2);
          }
          if (!failedNodes.contains(nodes[i])) {
            failedNodes.add(nodes[i]);
          }
        }
      }
      recorded = true;
      for (CircuitBreaker<Object> b : NodeHealth.distinct(nodes)) {
        if (failedNodes.contains(b)) {
          b.recordFailure();
        } else {
          b.recordSuccess();
        }
      }
      if (failure != null) {
        throw failure;
      }
      readPrevious(out, deadline);
      return out;
    }

    /** The new count of increment {@code i}. */
    private long count(int i, long deadline) {
      if (incrs[i] == null) {
        return raise(i, get(touches[i], deadline), 0, deadline);
      }
      {
        OperationFuture<Long> op = incrs[i];
        long v = value(get(op, deadline));
        CounterUpdate u = updates.get(i);
        for (int retry = 0; v < 0 && !succeeded(op) && retry < CREATION_RACE_RETRIES; retry++) {
          // Another instance created the key between our miss and our add: count again.
          op = u.running() ? incr(current[i], u, amounts[i]) : incr(current[i], u);
          v = value(get(op, deadline));
        }
        if (v < 0 && succeeded(op)) {
          // Memcached counts are unsigned 64-bit and wrap at 2^64: past 2^63 pin the count at the
          // largest long, so it never wraps back to a small number.
          OperationFuture<Boolean> unused =
              client().set(current[i], expiry(u.periodMillis()), Long.toString(Long.MAX_VALUE));
          v = Long.MAX_VALUE;
        }
        if (v < 0) {
          throw new StoreUnavailableException("incr of " + current[i] + " failed");
        }
        if (u.running()) {
          long before = v - amounts[i];
          if (before < u.floor() - slack(u)) {
            // Far behind after all (memcached lost it, or this instance's view was too high).
            boolean touched = touches[i] != null;
            CASValue<Object> seen =
                get(touched ? touches[i] : client().asyncGets(current[i]), deadline);
            // Only a read queued right behind this incr can tell that nothing came between.
            boolean alone = touched && seen != null && parse(seen.getValue()) == v;
            return raise(i, seen, alone ? amounts[i] : 0, deadline);
          }
          remember(current[i], v, u, touches[i] != null);
          // What this instance reserved, unless other instances' increments came before this one.
          return Math.max(reserved[i], before + u.delta());
        }
        return v;
      }
    }

    /**
     * Moves running counter {@code i} by compare-and-set to {@code max(value - own, floor) +
     * delta}, from {@code seen} (its value and CAS id, or null when memcached does not hold it),
     * trying again from a fresh read while other writers get in first. {@code own} is this
     * request's increment when {@code seen} holds it and nothing else moved the counter since, else
     * 0. Memcached has no atomic max: a blind write could erase other instances' increments, and an
     * increment that lands on a value behind its floor (an idle bucket) counts for nothing; a
     * compare-and-set does neither. A raise never lowers the counter. A counter found at or ahead
     * of its floor (another request raised it) is moved by {@code incr} instead, exact, and no
     * other writer can make it fail. When an increment did land behind and others wrote before the
     * raise, the raise cannot tell whether its own increment is still counted and counts the
     * request again: one request's tokens, once per refill.
     */
    private long raise(int i, CASValue<Object> seen, long own, long deadline) {
      CounterUpdate u = updates.get(i);
      String key = current[i];
      int expiry = expiry(u.periodMillis());
      long mine = own;
      CASValue<Object> last = seen;
      while (true) {
        if (last == null) {
          // Expired or evicted (or never written): the bucket is full.
          long full = u.floor() + u.delta();
          if (Boolean.TRUE.equals(get(client().add(key, expiry, Long.toString(full)), deadline))) {
            remember(key, full, u, true);
            return full;
          }
        } else if (mine == 0 && parse(last.getValue()) >= u.floor()) {
          // Raised since (by another request), or not behind at all: an incr is exact, and no
          // other writer can make it fail.
          long v = value(get(incr(key, u), deadline));
          if (v >= 0 && v - u.delta() >= u.floor()) {
            boolean renew = renewDue(key, u);
            if (renew) {
              var unused = client().touch(key, expiry);
            }
            remember(key, v, u, renew);
            return v;
          }
        } else {
          long raised = Math.max(parse(last.getValue()) - mine, u.floor()) + u.delta();
          CASResponse r =
              get(client().asyncCAS(key, last.getCas(), expiry, Long.toString(raised)), deadline);
          if (r == CASResponse.OK) {
            remember(key, raised, u, true);
            return raised;
          }
        }
        mine = 0;
        last = get(client().asyncGets(key), deadline);
      }
    }

    private void readPrevious(long[] out, long deadline) {
      Map<String, Long> read = gets.isEmpty() ? Map.of() : read(deadline);
      for (int i = 0; i < incrs.length; i++) {
        if (previous[i] == null) {
          out[2 * i + 1] = known[i];
          continue;
        }
        Long v = read.get(previous[i]);
        out[2 * i + 1] = v == null ? 0 : v;
        if (v != null && !updates.get(i).released()) {
          previousCounts.put(names[i], new PreviousCount(updates.get(i).window() - 1, v));
        }
      }
    }

    /**
     * The previous counts that were read. A previous window whose node did not answer is left out:
     * it is decided as empty, and asked for again next time.
     */
    private Map<String, Long> read(long deadline) {
      if (previousCounts.size() + gets.size() > PREVIOUS_CACHE_SIZE) {
        previousCounts.clear();
      }
      Map<String, Long> read = new HashMap<>(gets.size() * 2);
      for (Map.Entry<String, Future<Object>> g : gets.entrySet()) {
        try {
          read.put(g.getKey(), parse(get(g.getValue(), deadline)));
        } catch (StoreUnavailableException e) {
          LOG.debug("previous window {} not read", g.getKey(), e);
        }
      }
      return read;
    }

    /**
     * After a failure outside the operations' own answers: cancels, and answers every permit not
     * yet answered.
     */
    void failed() {
      cancel(incrs);
      cancel(touches);
      gets.values().forEach(f -> f.cancel(false));
      if (!recorded) {
        recorded = true;
        NodeHealth.distinct(nodes).forEach(CircuitBreaker::recordFailure);
      }
    }
  }

  /**
   * Sends running counter {@code i} of {@code b} by {@code incr} when this instance saw it lately
   * (no further behind its floor than {@link #slack}), and returns whether it did. The request is
   * reserved against this instance's view {@code L} of the counter, under the view's lock, and the
   * {@code incr} queued under it too, so this instance's increments reach memcached in the order
   * they were reserved: the request is given {@code max(L, floor) + delta} and the {@code incr}
   * adds exactly what moves {@code L} there (the delta, and the catch-up of a full bucket). Alone,
   * memcached's value is then the view, and every decision is exact GCRA. Other instances'
   * increments are not in the view: a catch-up may then count up to the slack twice (refusing, at
   * most, the slack's tokens wrongly), and a decision also sees what they added before it.
   */
  private boolean reserve(Batch b, int i) {
    CounterUpdate u = b.updates.get(i);
    String key = b.current[i];
    runningValues.computeIfPresent(
        key,
        (k, r) -> {
          if (r.value() <= u.floor() - slack(u)) {
            return r; // not seen lately: compare-and-set
          }
          long desired = Math.max(r.value(), u.floor()) + u.delta();
          long amount = desired - r.value();
          b.incrs[i] = incr(key, u, amount);
          b.amounts[i] = amount;
          b.reserved[i] = desired;
          return new Running(desired, r.renewed());
        });
    return b.incrs[i] != null;
  }

  /**
   * How far behind its floor this instance's view of a running counter may be and still be moved by
   * {@code incr} ({@link #reserve}): one request's delta, or a hundredth of the counter's period (a
   * token bucket's fill time, in the nanoseconds it counts), whichever is more. Alone, the view is
   * exact whatever the lag; with other instances writing, a catch-up may count their part of that
   * lag again, so the slack bounds what a fleet may refuse wrongly: one request's tokens, or 1 % of
   * the burst. A client sending faster than a hundredth of a fill time costs one round trip, not
   * two.
   */
  private static long slack(CounterUpdate u) {
    return Math.max(u.delta(), u.periodMillis() * 10_000);
  }

  /**
   * Remembers {@code value} of running counter {@code key} when it is within one fill time (the
   * counter's period, in the nanoseconds it counts) of the floor: a request that passed. A value
   * past it holds increments of refused requests, whose refunds will lower it; it proves nothing.
   */
  private void remember(String key, long value, CounterUpdate u, boolean renewed) {
    if (value - u.floor() > u.periodMillis() * 1_000_000) {
      return;
    }
    if (runningValues.size() >= PREVIOUS_CACHE_SIZE) {
      runningValues.clear();
    }
    long now = clock.millis();
    runningValues.merge(
        key,
        new Running(value, now),
        (was, seen) ->
            new Running(Math.max(was.value(), seen.value()), renewed ? now : was.renewed()));
  }

  /**
   * Whether this instance should renew running counter {@code key}'s expiry with this write: it has
   * not for a whole period (a fill time). {@code incr} sets an expiry only on create; a key renewed
   * at least once a fill time by each instance writing it outlives its TAT (at most one fill time
   * past the last write) by the expiry's two fill times plus slack.
   */
  private boolean renewDue(String key, CounterUpdate u) {
    Running known = runningValues.get(key);
    return known == null || clock.millis() - known.renewed() >= u.periodMillis();
  }

  private static void cancel(Future<?>[] futures) {
    for (Future<?> f : futures) {
      if (f != null) {
        f.cancel(false);
      }
    }
  }

  /**
   * The answer to an operation that was sent. Any failure here is unconfirmed: the operation may
   * have reached memcached (a timeout, spymemcached's own, a connection lost with it in flight).
   */
  private static <T> T get(Future<T> f, long deadline) {
    long wait = deadline - System.nanoTime();
    try {
      T v = f.get(Math.max(0, wait), TimeUnit.NANOSECONDS);
      if (v == null && f.isCancelled()) {
        throw StoreUnavailableException.unconfirmed("operation cancelled (node down)");
      }
      return v;
    } catch (TimeoutException e) {
      throw StoreUnavailableException.unconfirmed("memcached did not answer in time");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw StoreUnavailableException.unconfirmed("interrupted");
    } catch (ExecutionException | RuntimeException e) {
      throw StoreUnavailableException.unconfirmed("memcached failed: " + e.getMessage());
    }
  }

  /**
   * {@code incr} by the update's delta; a key memcached does not hold is created at the delta, or a
   * running counter at its floor plus the delta.
   */
  private OperationFuture<Long> incr(String key, CounterUpdate u) {
    return incr(key, u, u.delta());
  }

  /** {@code incr} by {@code amount}; a key memcached does not hold is created as for the update. */
  private OperationFuture<Long> incr(String key, CounterUpdate u, long amount) {
    return client().asyncIncr(key, amount, u.floor() + u.delta(), expiry(u.periodMillis()));
  }

  private static boolean succeeded(OperationFuture<Long> op) {
    return op.isDone() && op.getStatus() != null && op.getStatus().isSuccess();
  }

  private static long value(Long v) {
    return v == null ? -1 : v;
  }

  private static long parse(Object value) {
    if (value == null) {
      return 0;
    }
    try {
      return Long.parseLong(value.toString().trim());
    } catch (NumberFormatException e) {
      return 0;
    }
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

    private Builder() {}

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

    /** The most one decision waits for memcached; 50 ms by default. */
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
     * Whether the previous windows a batch needs are read with one multiget per node (true, the
     * default) or one get per key. The difference is measured in docs/BENCHMARKS.md.
     */
    public Builder bulkGets(boolean bulkGets) {
      this.bulkGets = bulkGets;
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
