package dev.sluice.store.redis;

import dev.sluice.spi.CounterBatch;
import dev.sluice.spi.CounterUpdate;
import io.lettuce.core.ScriptOutputType;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The store's decision path: each decision's scripts sent and awaited within its deadline, and the
 * refunds. Until Redis has answered once, a decision waits up to the cold timeout instead of the
 * operation timeout, and a call Redis refused unsent (a connection still opening) is sent again
 * within that wait, so a cold instance is counted from its first request. Thread-safe.
 */
final class Counting {

  static final int PREVIOUS_CACHE_SIZE = 100_000;

  /** The pause before a cold decision refused unsent is sent again. */
  static final long COLD_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

  /** The count of each counter's last ended window read. */
  final PreviousCounts previous = new PreviousCounts(PREVIOUS_CACHE_SIZE);

  final Keys keys;
  final Connection connection;
  final Health health;

  /** Whether a running counter's floor and ceiling are moved onto Redis's clock in the script. */
  final boolean serverTime;

  private final long timeoutNanos;
  private final long coldTimeoutNanos;

  /**
   * How long a script that outlived its decision's deadline is awaited for its late answer: twice
   * the longest a decision waits, at least a second.
   */
  final long lateNanos;

  /**
   * Where a non-blocking decision completes, and the caller's chain goes on: not Lettuce's I/O
   * thread, which would then run the rest of the request while every other answer from Redis waits
   * behind it. One thread a core; idle threads end, so a store never closed leaves none behind.
   */
  private final ExecutorService answers = answerThreads();

  /** Whether Redis has answered a decision of this store. */
  private volatile boolean answered;

  Counting(
      Keys keys,
      Connection connection,
      Health health,
      boolean serverTime,
      long timeoutNanos,
      long coldTimeoutNanos) {
    this.keys = keys;
    this.connection = connection;
    this.health = health;
    this.serverTime = serverTime;
    this.timeoutNanos = timeoutNanos;
    this.coldTimeoutNanos = coldTimeoutNanos;
    this.lateNanos = Math.max(2 * coldTimeoutNanos, TimeUnit.SECONDS.toNanos(1));
  }

  private static ExecutorService answerThreads() {
    AtomicInteger threads = new AtomicInteger();
    int n = Runtime.getRuntime().availableProcessors();
    ThreadPoolExecutor pool =
        new ThreadPoolExecutor(
            n,
            n,
            60,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            r -> {
              Thread t = new Thread(r, "sluice-redis-answer-" + threads.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    pool.allowCoreThreadTimeOut(true);
    return pool;
  }

  /** Ends the answer threads once the decisions they hold are answered. */
  void close() {
    answers.shutdown();
  }

  /** Counts the batch's counters and writes their counts into it ({@link CounterBatch#counted}). */
  void increment(CounterBatch batch) {
    boolean cold = !answered;
    long deadline = System.nanoTime() + (cold ? coldTimeoutNanos : timeoutNanos);
    while (true) {
      ScriptCall call = new ScriptCall(this, batch, true, deadline);
      try {
        call.send();
      } catch (RuntimeException e) {
        if (!retry(cold, call, deadline)) {
          throw e;
        }
        pause();
        continue;
      }
      try {
        call.await(deadline);
        answered = true;
        return;
      } catch (RuntimeException e) {
        call.failed();
        if (!retry(cold, call, deadline)) {
          throw e;
        }
      }
      pause();
    }
  }

  /**
   * {@link #increment} without waiting: the counts reach the batch in an {@link #answers} thread,
   * once Redis answered (or the deadline passed), before the returned future completes.
   */
  CompletableFuture<Void> incrementAsync(CounterBatch batch) {
    boolean cold = !answered;
    return incrementAsync(
        batch, cold, System.nanoTime() + (cold ? coldTimeoutNanos : timeoutNanos));
  }

  private CompletableFuture<Void> incrementAsync(CounterBatch batch, boolean cold, long deadline) {
    ScriptCall call = new ScriptCall(this, batch, false, deadline);
    try {
      call.send();
    } catch (RuntimeException e) {
      return again(batch, cold, deadline, call, e);
    }
    return CompletableFuture.allOf(call.futures)
        .orTimeout(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)
        .handleAsync((ok, error) -> (Void) null, answers)
        .thenCompose(
            v -> {
              try {
                call.await(System.nanoTime());
                answered = true;
                return CompletableFuture.<Void>completedFuture(null);
              } catch (RuntimeException e) {
                call.failed();
                return again(batch, cold, deadline, call, e);
              }
            });
  }

  private CompletableFuture<Void> again(
      CounterBatch batch, boolean cold, long deadline, ScriptCall call, RuntimeException e) {
    if (!retry(cold, call, deadline)) {
      return CompletableFuture.failedFuture(e);
    }
    return CompletableFuture.supplyAsync(
            () -> null, CompletableFuture.delayedExecutor(COLD_RETRY_NANOS, TimeUnit.NANOSECONDS))
        .thenCompose(v -> incrementAsync(batch, cold, deadline));
  }

  /**
   * Whether a failed call is sent again: only on a cold store, only when nothing reached Redis, and
   * only with time left before the deadline.
   */
  private boolean retry(boolean cold, ScriptCall call, long deadline) {
    boolean again =
        cold
            && !answered
            && call.unsent()
            && deadline - System.nanoTime() > COLD_RETRY_NANOS + timeoutNanos / 10;
    if (again) {
      // Refusals of connections still opening are not a node failing: a burst of first requests
      // must not open the breakers it is waiting out.
      health.reset();
    }
    return again;
  }

  private static void pause() {
    try {
      TimeUnit.NANOSECONDS.sleep(COLD_RETRY_NANOS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StoreUnavailableException("interrupted while waiting for redis");
    }
  }

  /** Gives counts back, one script per slot; a node whose breaker is not closed gets none. */
  CompletableFuture<Void> decrementAsync(List<CounterUpdate> updates) {
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
  void reconnected() {
    health.reset();
  }
}
