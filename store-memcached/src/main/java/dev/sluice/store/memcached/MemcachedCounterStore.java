package dev.sluice.store.memcached;

import dev.sluice.spi.CounterBatch;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterUpdate;
import dev.sluice.spi.Counts;
import dev.sluice.spi.SharedValues;
import dev.sluice.spi.StoreClock;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import net.spy.memcached.MemcachedClient;

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
 * clock skew. Keys are {@code {prefix}:{policy}:{identity}:{period}:w1.{window}} ({@code w1} the
 * value's format) with unsafe or long parts replaced by a digest (no raw caller data reaches the
 * wire); windows live two periods plus slack, and a TTL over 30 days is sent as an absolute Unix
 * time, as memcached requires.
 *
 * <p>A request path never waits long: the batch gets one deadline ({@link
 * MemcachedStoreBuilder#operationTimeout}, 50 ms by default), operations are never queued behind a
 * full queue, and operations for a node that is down are cancelled at once. A circuit breaker per
 * node stops calling a node after repeated failures and lets a probe through after a delay ({@link
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
 * <p>Several servers are spread by consistent hashing ({@link KeyHash}). Thread-safe; {@link
 * #close()} shuts the client down.
 */
public final class MemcachedCounterStore implements CounterStore {

  /** Added to two periods when choosing a window's TTL: room for clock skew between instances. */
  static final long TTL_SLACK_SECONDS = 10;

  /** Memcached reads an expiry beyond this many seconds as an absolute Unix time. */
  static final long MAX_RELATIVE_TTL = 60L * 60 * 24 * 30;

  static final int PREVIOUS_CACHE_SIZE = 100_000;

  /** The connection, keys, health and caches a batch counts with. */
  private final Counting counting;

  /** Running counters, as {@link Counting#lines}; for tests. */
  final RunningLines lines;

  private final Connection connection;
  private final long timeoutNanos;

  /** How long a decision waits until memcached has answered this store once ({@link #deadline}). */
  private final long coldTimeoutNanos;

  /** Whether memcached has answered a decision of this store. */
  private volatile boolean answered;

  /** Where an asynchronous increment's deadline is kept. */
  private final ScheduledExecutorService scheduler;

  private final MemcachedValues values;
  private final EvictionWatch evictions;

  /** Memcached's clock, measured in the background; null when turned off. */
  private final MemcachedClock storeClock;

  private final String servers;

  MemcachedCounterStore(MemcachedStoreBuilder b) throws IOException {
    SpyLogging.install();
    this.servers = b.servers.toString();
    this.timeoutNanos = b.operationTimeout.toNanos();
    this.coldTimeoutNanos = Math.max(timeoutNanos, b.connectTimeout.toNanos());
    this.scheduler = b.scheduler;
    // A round abandoned as stuck only once no decision could still be waiting on it.
    this.counting = new Counting(b, Math.max(2 * coldTimeoutNanos, 1_000_000_000L));
    this.lines = counting.lines;
    this.connection = counting.connection();
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
            ? SharedClocks.acquire(
                b.servers,
                b.clock,
                // A probe waits briefly: its steps share the store's scheduler.
                (int) Math.max(100, Math.min(500, b.connectTimeout.toMillis())),
                b.clockAlignSeconds,
                b.scheduler,
                // The first tick comes within a second; a store decides on it from its first call.
                Math.min(1_500, Math.max(1, b.connectTimeout.toMillis())))
            : null;
  }

  public static MemcachedStoreBuilder builder() {
    return new MemcachedStoreBuilder();
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
    counting.decrement(updates);
  }

  @Override
  public void close() {
    evictions.close();
    if (storeClock != null) {
      SharedClocks.release(storeClock);
    }
    counting.health.closing();
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
   * unless given a clock of their own; empty when {@link MemcachedStoreBuilder#storeClock} is off.
   */
  @Override
  public java.util.Optional<StoreClock> clock() {
    return java.util.Optional.ofNullable(storeClock);
  }

  /** The key a counter's window is stored under; for tests and operators. */
  String keyOf(CounterUpdate u) {
    return counting.keys.key(u);
  }

  /** How many connections this store has opened, reconnections included; for tests. */
  int connectionsOpened() {
    return connection.opened();
  }

  /** The current client; for tests. */
  MemcachedClient client() {
    return counting.client();
  }

  /** Whether the breaker of {@code key}'s node is open (calls to it are skipped). */
  boolean breakerOpen(String key) {
    return counting.health.breaker(key).isOpen();
  }

  @Override
  public String toString() {
    return "memcached store " + servers;
  }

  /** Expiry for a window of {@code periodMillis}, as {@link Counting#expiry}; for tests. */
  int expiry(long periodMillis) {
    return counting.expiry(periodMillis);
  }

  private Batch send(List<CounterUpdate> updates) {
    Batch batch = new Batch(counting, updates);
    batch.send();
    return batch;
  }
}
