package dev.sluice.twolayer;

import dev.sluice.engine.LogGate;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterUpdate;
import dev.sluice.spi.Counts;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The pushes of {@link TwoLayerStore}: the queue of counters with counts the shared store has not
 * had, and one push of every due counter in one batch, whose answer brings the fleet's totals back
 * (or, when it fails, puts the counts back to push again). Thread-safe.
 */
final class TwoLayerSync {

  private static final Logger LOG = LoggerFactory.getLogger(TwoLayerStore.class);

  /** Shared-store calls made by syncing, for tests and metrics. */
  final AtomicLong syncCalls = new AtomicLong();

  /** Ticks that scanned for due counters (the others knew none was due), for tests. */
  final AtomicLong scans = new AtomicLong();

  /**
   * Counters the scans took out of {@link #inbox} and {@link #waiting} to look at, pushed or not,
   * for tests.
   */
  final AtomicLong looked = new AtomicLong();

  /** Counted deltas dropped because their window was over before the store answered again. */
  final AtomicLong droppedDeltas = new AtomicLong();

  /** Permits pushed without an answer in time, and not pushed again. */
  final AtomicLong unconfirmedDeltas = new AtomicLong();

  /** Whether the last push failed: local counting then stops at each counter's allowance. */
  volatile boolean storeDown;

  /**
   * Counters just queued (counts the store has not had yet), or due sooner than when they were
   * queued (a new window, a shorter interval), for the next scan to look at.
   */
  private final ConcurrentLinkedQueue<TwoLayerCounter> inbox = new ConcurrentLinkedQueue<>();

  /**
   * Queued counters a scan found not due yet, by when they are due; under {@link #pushing}. A scan
   * takes out only those due by then, so its work is the counters it pushes rather than every
   * counter queued. An entry whose counter was pushed since (no longer queued) is dropped when it
   * comes out.
   */
  private final PriorityQueue<Waiting> waiting =
      new PriorityQueue<>((a, b) -> Long.compare(a.at(), b.at()));

  /**
   * The earliest instant (clock millis) a queued counter may be due: a tick before it finds nothing
   * to push and does not scan. Lowered when a counter is queued, rolls to a new window, has its
   * interval shortened or its push completes; set from the earliest waiting counter by each scan.
   */
  private final AtomicLong nextDue = new AtomicLong(Long.MIN_VALUE);

  /**
   * Held by a push from its scan of the queue until its batch is sent (and listed in {@link
   * #pending}): a flush then never finds a counter that another push has taken out and not sent.
   */
  private final ReentrantLock pushing = new ReentrantLock();

  /** The ends of the pushes and refunds sent and not answered yet, by their number. */
  private final Map<Long, CompletableFuture<?>> pending = new ConcurrentHashMap<>();

  /** Pushes sent so far; under {@link #pushing}. */
  private long sent;

  private final LogGate warnings = new LogGate(10_000);
  private final CounterStore shared;
  private final InstantSource clock;
  private final Map<CounterKey, TwoLayerCounter> counters;

  TwoLayerSync(
      CounterStore shared, InstantSource clock, Map<CounterKey, TwoLayerCounter> counters) {
    this.shared = shared;
    this.clock = clock;
    this.counters = counters;
  }

  /** A push in flight: which counter, window and delta. */
  private record Push(TwoLayerCounter counter, long window, long delta) {}

  /** A queued counter and when it is due (clock millis). */
  private record Waiting(TwoLayerCounter counter, long at) {}

  /**
   * Queues {@code c} when {@code enqueue} (newly queued, or due sooner than when it was queued),
   * and makes the scan due by {@code dueAt}.
   */
  void queue(TwoLayerCounter c, boolean enqueue, long dueAt) {
    if (enqueue) {
      inbox.add(c);
    }
    dueBy(dueAt);
  }

  /**
   * Pushes every counter that is due (its first request in a window, or an interval since its last
   * push) in one batch, and reads the fleet's totals back. Returns when the batch is sent.
   */
  void syncDue() {
    pushing.lock();
    try {
      var unused = push(false);
    } finally {
      pushing.unlock();
    }
  }

  /** Makes the tick at or after {@code millis} scan the queue. */
  private void dueBy(long millis) {
    if (millis < nextDue.get()) {
      nextDue.accumulateAndGet(millis, Math::min);
    }
  }

  /**
   * Pushes every counter's unsynced count at once, whatever its interval, and waits up to {@code
   * timeoutMillis} for the store's answer: for an instance that shuts down, so the fleet's counts
   * hold what it admitted. The pushes and refunds in flight are waited for first, with no other
   * push started meanwhile: one that fails gives its count back to push now, but one without an
   * answer in time is never sent again (memcached may still apply it).
   *
   * @return whether every count reached the store in time: false when a push had no answer in time
   *     or failed at the end, or the wait ran out (a refund that fails is logged and lost, as at
   *     any time)
   */
  boolean flush(long timeoutMillis) {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    try {
      if (!pushing.tryLock(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
        return false;
      }
      boolean kept;
      CompletableFuture<?> last;
      try {
        long unconfirmed = unconfirmedDeltas.get();
        kept = settled(deadline) && unconfirmedDeltas.get() == unconfirmed;
        last = push(true);
      } finally {
        pushing.unlock();
      }
      return settled(deadline) && kept && !last.isCompletedExceptionally();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /**
   * Waits until {@code deadline} (nano time) for the pushes and refunds in flight to end, answered
   * or failed; whether they all ended.
   */
  private boolean settled(long deadline) throws InterruptedException {
    CompletableFuture<?>[] ends = pending.values().toArray(new CompletableFuture<?>[0]);
    try {
      CompletableFuture.allOf(ends)
          .handle((v, e) -> null)
          .get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      return true;
    } catch (ExecutionException | TimeoutException e) {
      LOG.debug("two-layer flush ran out of time", e);
      return false;
    }
  }

  /**
   * {@link #syncDue}, or with {@code all} every counter with something unsynced; the push's end.
   * Holds {@link #pushing}.
   */
  private CompletableFuture<?> push(boolean all) {
    long now = clock.millis();
    if (all) {
      for (TwoLayerCounter c : counters.values()) {
        synchronized (c) {
          c.lastSync = Long.MIN_VALUE;
          if (!c.queued && (c.unsynced != 0 || c.oldUnsynced != 0)) {
            c.queued = true;
            inbox.add(c);
          }
        }
      }
    }
    // Most ticks find no counter due (each waits out its interval): they do not scan.
    if (!all && now < nextDue.get()) {
      return CompletableFuture.completedFuture(null);
    }
    nextDue.set(Long.MAX_VALUE);
    scans.incrementAndGet();
    List<Waiting> later = new ArrayList<>();
    List<CounterUpdate> updates = new ArrayList<>();
    List<Push> pushes = new ArrayList<>();
    List<CounterUpdate> takeBack = new ArrayList<>(0);
    try {
      scan(all, now, later, updates, pushes, takeBack);
    } finally {
      waiting.addAll(later);
      if (!waiting.isEmpty()) {
        dueBy(waiting.peek().at());
      }
    }
    if (!takeBack.isEmpty()) {
      syncCalls.incrementAndGet();
      CompletableFuture<Void> refund;
      try {
        refund = shared.decrementAsync(takeBack);
      } catch (RuntimeException e) {
        refund = CompletableFuture.failedFuture(e);
      }
      var unused =
          inFlight(
              refund.whenComplete(
                  (v, e) -> {
                    if (e != null) {
                      LOG.debug("two-layer refund failed", e);
                    }
                  }));
    }
    if (updates.isEmpty()) {
      return CompletableFuture.completedFuture(null);
    }
    syncCalls.incrementAndGet();
    CompletableFuture<Counts> f;
    try {
      f = shared.incrementAsync(updates);
    } catch (RuntimeException e) {
      f = CompletableFuture.failedFuture(e);
    }
    return inFlight(f.whenComplete((counts, error) -> completed(pushes, counts, error)));
  }

  /**
   * Takes out the counters just queued and the waiting ones due by {@code now} (every one when
   * {@code all}): adds each that is due to {@code updates} and {@code pushes} (its refunds to
   * {@code takeBack}), and lists the others in {@code later}, by when each is due. Holds {@link
   * #pushing}.
   */
  private void scan(
      boolean all,
      long now,
      List<Waiting> later,
      List<CounterUpdate> updates,
      List<Push> pushes,
      List<CounterUpdate> takeBack) {
    while (true) {
      TwoLayerCounter c = inbox.poll();
      if (c == null) {
        if (waiting.isEmpty() || (!all && waiting.peek().at() > now)) {
          break;
        }
        c = waiting.poll().counter();
      }
      looked.incrementAndGet();
      synchronized (c) {
        if (!c.queued) {
          continue; // pushed since it was queued or looked at
        }
        long at = c.dueAt();
        if (c.inflight != 0 || at > now) {
          // Looked at again at its interval; a counter whose push in flight has outlasted it, an
          // interval from now, or when that push completes.
          later.add(new Waiting(c, at > now ? at : now + c.syncMillis));
          continue;
        }
        c.queued = false;
        c.lastSync = now;
        CounterKey k = c.key;
        if (c.oldUnsynced > 0) {
          updates.add(
              new CounterUpdate(
                  k.policy(), k.identity(), k.periodMillis(), c.window - 1, c.oldUnsynced));
          pushes.add(new Push(c, c.window - 1, c.oldUnsynced));
          c.oldUnsynced = 0;
        } else if (c.oldUnsynced < 0) {
          // Refunded after its push, and the window rolled before the next one.
          takeBack.add(
              new CounterUpdate(
                  k.policy(), k.identity(), k.periodMillis(), c.window - 1, -c.oldUnsynced));
          c.oldUnsynced = 0;
        }
        if (c.unsynced > 0) {
          updates.add(
              new CounterUpdate(k.policy(), k.identity(), k.periodMillis(), c.window, c.unsynced));
          pushes.add(new Push(c, c.window, c.unsynced));
          c.inflight = c.unsynced;
          c.unsynced = 0;
        } else if (c.unsynced < 0) {
          takeBack.add(
              new CounterUpdate(k.policy(), k.identity(), k.periodMillis(), c.window, -c.unsynced));
          c.shared = Math.max(0, c.shared + c.unsynced);
          c.unsynced = 0;
        }
      }
    }
  }

  /** Lists {@code end} in {@link #pending} until it completes; under {@link #pushing}. */
  private CompletableFuture<?> inFlight(CompletableFuture<?> end) {
    Long n = ++sent;
    pending.put(n, end);
    var unused = end.whenComplete((v, e) -> pending.remove(n));
    return end;
  }

  private void completed(List<Push> pushes, Counts counts, Throwable error) {
    boolean failed = error != null || counts == null || counts.size() < pushes.size();
    // Sent and not answered: memcached may apply it yet, so it is never sent again (that would
    // count it twice, for the whole fleet); the next push reads the fleet's count back.
    boolean unconfirmed = failed && dev.sluice.spi.StoreTimeoutException.in(error);
    storeDown = failed;
    if (failed && warnings.tryAcquire(clock.millis())) {
      LOG.warn(
          "two-layer sync failed; counting locally and pushing later (warned at most every 10 s):"
              + " {}",
          String.valueOf(error));
    }
    long answered = clock.millis();
    for (int j = 0; j < pushes.size(); j++) {
      Push p = pushes.get(j);
      TwoLayerCounter c = p.counter();
      boolean requeue = false;
      long dueAt;
      synchronized (c) {
        boolean current = p.window() == c.window;
        boolean previous = p.window() == c.window - 1;
        if (current && c.inflight > 0) {
          c.inflight = 0;
        }
        if (unconfirmed) {
          unconfirmedDeltas.addAndGet(p.delta());
        } else if (failed) {
          if (current) {
            c.unsynced += p.delta();
          } else if (previous) {
            c.oldUnsynced += p.delta();
          } else {
            droppedDeltas.addAndGet(p.delta());
          }
          requeue = !c.queued;
          c.queued = true;
        } else if (current) {
          c.shared = counts.current(j);
          c.previous = Math.max(c.previous, counts.previous(j));
        } else if (previous) {
          c.previous = Math.max(c.previous, counts.current(j));
        }
        // Queued while its push was in flight (or queued again now): due at its interval, and
        // looked at again now if the push outlasted it.
        dueAt = !c.queued ? Long.MAX_VALUE : c.dueAt();
        requeue |= c.queued && dueAt <= answered;
      }
      if (requeue) {
        inbox.add(c);
      }
      dueBy(dueAt);
    }
  }
}
