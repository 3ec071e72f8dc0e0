package dev.sluice.store.memcached;

import dev.failsafe.CircuitBreaker;
import dev.sluice.spi.CounterUpdate;
import dev.sluice.spi.Counts;
import dev.sluice.spi.StoreTimeoutException;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import net.spy.memcached.internal.BulkFuture;
import net.spy.memcached.internal.OperationFuture;
import net.spy.memcached.ops.OperationStatus;
import net.spy.memcached.ops.StatusCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The keys and futures of one decision's operations, sent through its store's {@link Counting} and
 * awaited under one deadline: each window counter's {@code incr}, each running counter's move by
 * compare-and-set ({@link RunningLines}), the reads of previous windows the cache does not know,
 * and each node's breaker told of its own operations.
 */
final class Batch {

  private static final Logger LOG = LoggerFactory.getLogger(Batch.class);

  private static final int CREATION_RACE_RETRIES = 3;

  private final Counting counting;
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

  /** For a running counter, its move on this instance's line ({@link RunningLines}). */
  final RunningLines.Move[] moves;

  /** The reads of the previous windows, by key; most decisions have none. */
  private Map<String, Future<Object>> gets = Map.of();

  /** The breaker of each increment's node. */
  private CircuitBreaker<Object>[] nodes;

  private boolean recorded;

  /** Names the counters, and takes each previous count the cache knows. */
  @SuppressWarnings("unchecked")
  Batch(Counting counting, List<CounterUpdate> updates) {
    this.counting = counting;
    int n = updates.size();
    this.updates = updates;
    this.current = new String[n];
    this.names = new String[n];
    this.previous = new String[n];
    this.known = new long[n];
    this.incrs = new OperationFuture[n];
    this.moves = new RunningLines.Move[n];
    for (int i = 0; i < n; i++) {
      CounterUpdate u = updates.get(i);
      if (u.running()) {
        // One value, no previous window to read.
        current[i] = counting.keys.key(u);
        continue;
      }
      Keys.Named named = counting.keys.named(u);
      String name = named.name();
      names[i] = name;
      current[i] = named.key();
      // Slots given back after their window ended lower its count: read it every time.
      long cached =
          u.released() ? PreviousCounts.UNKNOWN : counting.previous.get(name, u.window() - 1);
      if (cached != PreviousCounts.UNKNOWN) {
        known[i] = cached;
      } else {
        previous[i] = name + (u.window() - 1);
      }
    }
  }

  /** Takes a permit from each node's breaker, and queues the increments and the reads. */
  void send() {
    nodes = counting.health.acquire(current);
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
    // The I/O thread wakes once, for all of them (a sync's batch may hold thousands).
    Wakeups.hold();
    try {
      for (int i = 0; i < incrs.length; i++) {
        CounterUpdate u = updates.get(i);
        if (u.running()) {
          moves[i] = counting.lines.join(current[i], u);
        } else {
          incrs[i] = counting.incr(current[i], u);
        }
      }
      queueReads(unknown, gets);
    } catch (RuntimeException e) {
      // Not sent (a full queue, a client shutting down): every permit taken is answered. An
      // operation queued before the failure may still be written: then it is unconfirmed.
      boolean queued = anyQueued();
      Replies.cancel(incrs);
      Replies.cancel(moves);
      gets.values().forEach(f -> f.cancel(false));
      NodeHealth.distinct(nodes).forEach(counting.health::failed);
      String message = "memcached operations could not be sent: " + e;
      throw queued
          ? StoreUnavailableException.unconfirmed(message)
          : new StoreUnavailableException(message);
    } finally {
      Wakeups.release();
    }
  }

  /**
   * Every operation {@link #send} queued, for a caller that waits for their answers without parking
   * ({@link Answers#whenAll}) and then calls {@link #await}, which finds them all answered.
   */
  List<Future<?>> sent() {
    List<Future<?>> all = new ArrayList<>(incrs.length + moves.length + gets.size());
    for (Future<?> f : incrs) {
      if (f != null) {
        all.add(f);
      }
    }
    for (Future<?> f : moves) {
      if (f != null) {
        all.add(f);
      }
    }
    all.addAll(gets.values());
    return all;
  }

  private boolean anyQueued() {
    for (int i = 0; i < incrs.length; i++) {
      if (incrs[i] != null || moves[i] != null) {
        return true;
      }
    }
    return false;
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
        if (failure == null || !StoreTimeoutException.in(failure)) {
          // An unconfirmed failure wins: the batch's other increments may have been applied.
          failure = e;
        }
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
        counting.health.failed(b);
      } else {
        counting.health.succeeded(b);
      }
    }
    if (failure != null) {
      if (StoreTimeoutException.in(failure)) {
        listening = true;
        throw StoreUnavailableException.unconfirmed(failure.getMessage(), late());
      }
      throw failure;
    }
    readPrevious(out, deadline);
    return out;
  }

  /**
   * Whether the batch waits for the late answers of a call that timed out: nothing is cancelled.
   */
  private boolean listening;

  /**
   * The counts memcached answers after the deadline, once every increment and move has: each
   * counter's new count, and the previous count the cache knew or the read of it answered (0 when
   * neither did). Fails when any operation failed or answered no count, or when memcached has not
   * answered them all within {@link Counting#stuckNanos}.
   *
   * <p>spymemcached completes an {@code incr} its caller timed out on with a timed-out status, and
   * writes memcached's answer over it when that comes: a node answers its operations in order, so a
   * read sent after the timeout to each such {@code incr}'s node is answered after it, and then
   * finds its count in its status.
   */
  private CompletableFuture<Counts> late() {
    CompletableFuture<Counts> late = new CompletableFuture<>();
    List<Future<?>> answers = new ArrayList<>(incrs.length);
    List<SocketAddress> behind = List.of();
    try {
      for (int i = 0; i < incrs.length; i++) {
        if (moves[i] != null) {
          answers.add(moves[i]);
        } else if (!incrs[i].isDone() || !timedOut(incrs[i])) {
          answers.add(incrs[i]);
        } else {
          SocketAddress node = counting.nodeOf(current[i]);
          if (!behind.contains(node)) {
            if (behind.isEmpty()) {
              behind = new ArrayList<>(2);
            }
            behind.add(node);
            answers.add(counting.client().asyncGet(current[i]));
          }
        }
      }
    } catch (RuntimeException e) {
      // The reads could not be sent: nothing tells when the incrs are answered.
      late.completeExceptionally(e);
      return late;
    }
    Answers.whenAll(
        answers,
        () -> {
          try {
            long[] out = new long[2 * incrs.length];
            for (int i = 0; i < incrs.length; i++) {
              out[2 * i] = moves[i] != null ? moves[i].getNow(null) : lateCount(i);
              out[2 * i + 1] = previous[i] == null ? known[i] : lateRead(previous[i]);
            }
            late.complete(Counts.of(out));
          } catch (RuntimeException e) {
            // A failure, a cancellation: nothing to learn from.
            late.completeExceptionally(e);
          }
        });
    return late.orTimeout(counting.stuckNanos, TimeUnit.NANOSECONDS);
  }

  /**
   * Whether spymemcached completed {@code op} as timed out, memcached's answer not written over.
   */
  private static boolean timedOut(OperationFuture<Long> op) {
    OperationStatus status = op.getStatus();
    return status != null && status.getStatusCode() == StatusCode.TIMEDOUT;
  }

  /** The count memcached answered to {@code incr} {@code i}, read from its status. */
  private long lateCount(int i) {
    OperationFuture<Long> op = incrs[i];
    OperationStatus status = op.isDone() ? op.getStatus() : null;
    if (status == null || !status.isSuccess()) {
      throw new IllegalStateException("incr of " + current[i] + " answered no count");
    }
    long v = Long.parseUnsignedLong(status.getMessage().trim());
    // Past 2^63 the count is pinned at the largest long, as one answered in time.
    return v < 0 ? Long.MAX_VALUE : v;
  }

  /** The previous count read with the batch, if its read has answered; else 0. */
  private long lateRead(String key) {
    Future<Object> g = gets.get(key);
    if (g == null || !g.isDone() || g.isCancelled()) {
      return 0;
    }
    try {
      return Replies.parse(g.get());
    } catch (Exception e) {
      return 0;
    }
  }

  /** The new count of increment {@code i}, or the value running counter {@code i} reports. */
  private long count(int i, long deadline) {
    if (moves[i] != null) {
      try {
        return Replies.get(moves[i], deadline);
      } catch (StoreUnavailableException e) {
        // Left in its line: the move is written when memcached answers, and its value reported late
        // ({@link #late}), as a late incr's is.
        throw e;
      }
    }
    OperationFuture<Long> op = incrs[i];
    long v = Replies.value(Replies.get(op, deadline));
    CounterUpdate u = updates.get(i);
    for (int retry = 0; v < 0 && !Replies.succeeded(op) && retry < CREATION_RACE_RETRIES; retry++) {
      // Another instance created the key between our miss and our add: count again.
      op = counting.incr(current[i], u);
      v = Replies.value(Replies.get(op, deadline));
    }
    if (v < 0 && Replies.succeeded(op)) {
      // Memcached counts are unsigned 64-bit and wrap at 2^64: past 2^63 pin the count at the
      // largest long, so it never wraps back to a small number.
      OperationFuture<Boolean> unused =
          counting
              .client()
              .set(current[i], counting.expiry(u.periodMillis()), Long.toString(Long.MAX_VALUE));
      v = Long.MAX_VALUE;
    }
    if (v < 0) {
      // The batch's other increments were sent, and may have been applied.
      throw StoreUnavailableException.unconfirmed("incr of " + current[i] + " failed");
    }
    return v;
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
        counting.previous.put(names[i], updates.get(i).window() - 1, v);
      }
    }
  }

  /**
   * The previous counts that were read. A previous window whose node did not answer is left out: it
   * is decided as empty, and asked for again next time.
   */
  private Map<String, Long> read(long deadline) {
    counting.previous.makeRoom(gets.size());
    Map<String, Long> read = new HashMap<>(gets.size() * 2);
    for (Map.Entry<String, Future<Object>> g : gets.entrySet()) {
      try {
        read.put(g.getKey(), Replies.parse(Replies.get(g.getValue(), deadline)));
      } catch (StoreUnavailableException e) {
        LOG.debug("previous window {} not read", g.getKey(), e);
      }
    }
    return read;
  }

  /**
   * After a failure outside the operations' own answers: cancels, and answers every permit not yet
   * answered.
   */
  void failed() {
    if (!listening) {
      Replies.cancel(incrs);
      Replies.cancel(moves);
      gets.values().forEach(f -> f.cancel(false));
    }
    if (!recorded) {
      recorded = true;
      NodeHealth.distinct(nodes).forEach(counting.health::failed);
    }
  }

  /**
   * Queues the reads of the previous windows: one multiget per node when {@link
   * MemcachedStoreBuilder#bulkGets} is on (the default), else one get per key. Per node, not one
   * bulk get for all: a bulk get fails whole when one of its nodes is down, and a previous window
   * may live on another node than its current window.
   */
  private void queueReads(List<String> unknown, Map<String, Future<Object>> gets) {
    if (!counting.bulkGets || unknown.size() < 2) {
      for (String k : unknown) {
        gets.computeIfAbsent(k, counting.client()::asyncGet);
      }
      return;
    }
    Map<SocketAddress, List<String>> byNode = new HashMap<>(4);
    for (String k : unknown) {
      byNode.computeIfAbsent(counting.nodeOf(k), n -> new ArrayList<>()).add(k);
    }
    for (List<String> keysOfNode : byNode.values()) {
      if (keysOfNode.size() == 1) {
        gets.computeIfAbsent(keysOfNode.get(0), counting.client()::asyncGet);
        continue;
      }
      BulkFuture<Map<String, Object>> bulk = counting.client().asyncGetBulk(keysOfNode);
      for (String k : keysOfNode) {
        gets.put(k, new OneOfBulk(bulk, k));
      }
    }
  }
}
