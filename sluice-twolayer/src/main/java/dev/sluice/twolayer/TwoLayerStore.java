package dev.sluice.twolayer;

import dev.sluice.Sync;
import dev.sluice.engine.TwoLayer;
import dev.sluice.engine.TwoLayerBatch;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterUpdate;
import dev.sluice.spi.Counts;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Two-layer counting ({@link Sync}) over a shared store. A counter of a synced policy is counted
 * here, and a decision is answered from the local view: the fleet's total as last read, plus what
 * this instance counted since. A background task pushes each counter's local delta to the shared
 * store at most once per sync interval, with every due counter in one batch, and reads the fleet's
 * total back in the same round trip ({@code incr} returns it). A counter's first request in a
 * window is pushed at the next tick ({@value #TICK_MILLIS} ms), not synchronously: a decision never
 * waits for the network, and the overshoot bound already covers one interval of unseen traffic.
 *
 * <p>While the shared store fails, local counting goes on and unsynced deltas are kept (for the
 * current and the previous window, the two a decision reads) and pushed when it answers again. Only
 * once this instance's own count in a window exceeds the counter's local allowance ({@code limit ÷
 * instances}) does a decision fail, so that the policy's store-failure setting applies.
 *
 * <p>Counters of other policies go straight to the shared store. At most {@link #MAX_COUNTERS}
 * local counters are kept (the in-memory store's default cap); beyond it new counters are counted
 * directly in the shared store. Expired counters are swept once a second. Thread-safe.
 */
final class TwoLayerStore implements TwoLayer {

  /** The most local counters kept, as the in-memory store's default. */
  static final long MAX_COUNTERS = 1_000_000;

  static final long TICK_MILLIS = 5;
  private static final long SWEEP_EVERY_TICKS = 200;
  private static final Logger LOG = LoggerFactory.getLogger(TwoLayerStore.class);

  private final CounterStore shared;
  private final InstantSource clock;
  private final long maxCounters;
  private final Map<CounterKey, TwoLayerCounter> counters = new ConcurrentHashMap<>();

  /** Where the syncs run; empty when tests sync by hand. */
  private final Optional<ScheduledExecutorService> scheduler;

  private volatile boolean started;
  private long ticks;

  /** The pushes to the shared store, and what they count. */
  final TwoLayerSync sync;

  /** Ticks that scanned for due counters (the others knew none was due), for tests. */
  final AtomicLong scans;

  /** Permits pushed without an answer in time, and not pushed again. */
  final AtomicLong unconfirmedDeltas;

  /**
   * @param scheduler where to sync every {@value #TICK_MILLIS} ms; empty for tests, which call
   *     {@link #syncDue()} themselves
   */
  TwoLayerStore(
      CounterStore shared,
      InstantSource clock,
      long maxCounters,
      Optional<ScheduledExecutorService> scheduler) {
    this.shared = shared;
    this.clock = clock;
    this.maxCounters = maxCounters;
    this.scheduler = scheduler;
    this.sync = new TwoLayerSync(shared, clock, counters);
    this.scans = sync.scans;
    this.unconfirmedDeltas = sync.unconfirmedDeltas;
  }

  /**
   * Counts the batch: synced counters here, the others in the shared store.
   *
   * @throws RuntimeException when the shared store fails for a direct counter, or when it is down
   *     and a synced counter is past its local allowance
   */
  @Override
  public void increment(TwoLayerBatch batch) {
    List<Integer> direct = countLocally(batch);
    if (direct != null) {
      Counts counts = shared.increment(directUpdates(batch, direct));
      counted(batch, direct, counts);
    }
    startOnce();
  }

  /**
   * {@link #increment} without waiting on the shared store: the synced counters are counted here at
   * once, the others sent to the shared store asynchronously.
   */
  @Override
  public CompletableFuture<Void> incrementAsync(TwoLayerBatch batch) {
    List<Integer> direct;
    try {
      direct = countLocally(batch);
      startOnce();
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    if (direct == null) {
      return CompletableFuture.completedFuture(null);
    }
    CompletableFuture<Counts> f;
    try {
      f = shared.incrementAsync(directUpdates(batch, direct));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    return f.thenAccept(counts -> counted(batch, direct, counts));
  }

  /**
   * Counts the synced counters here; returns the indexes of those for the shared store, or null.
   */
  private List<Integer> countLocally(TwoLayerBatch batch) {
    int n = batch.size();
    if (sync.storeDown) {
      checkAllowance(batch);
    }
    List<Integer> direct = null;
    for (int i = 0; i < n; i++) {
      long sync = batch.syncMillis(i);
      if (sync <= 0 || !countLocally(batch, i, sync)) {
        if (direct == null) {
          direct = new ArrayList<>(n);
        }
        direct.add(i);
      }
    }
    return direct;
  }

  private static List<CounterUpdate> directUpdates(TwoLayerBatch batch, List<Integer> direct) {
    List<CounterUpdate> updates = new ArrayList<>(direct.size());
    for (int i : direct) {
      updates.add(
          new CounterUpdate(
              batch.policy(i),
              batch.identity(i),
              batch.periodMillis(i),
              batch.window(i),
              batch.delta(i),
              batch.floor(i),
              batch.released(i),
              batch.ceiling(i)));
    }
    return updates;
  }

  private static void counted(TwoLayerBatch batch, List<Integer> direct, Counts counts) {
    for (int j = 0; j < direct.size(); j++) {
      batch.counted(direct.get(j), counts.current(j), counts.previous(j));
    }
  }

  private void startOnce() {
    if (!started && scheduler.isPresent()) {
      startSyncer();
    }
  }

  /** Fails the decision when a synced counter would pass its allowance while the store is down. */
  private void checkAllowance(TwoLayerBatch batch) {
    for (int i = 0; i < batch.size(); i++) {
      if (batch.syncMillis(i) <= 0) {
        continue;
      }
      TwoLayerCounter c = counters.get(batch.key(i));
      long own = 0;
      if (c != null) {
        synchronized (c) {
          own = c.window == batch.window(i) ? c.own : 0;
        }
      }
      if (own + batch.delta(i) > batch.localAllowance(i)) {
        throw new IllegalStateException(
            "counter store down and this instance's own count of policy '"
                + batch.policy(i)
                + "' is past its share ("
                + batch.localAllowance(i)
                + ")");
      }
    }
  }

  private boolean countLocally(TwoLayerBatch batch, int i, long sync) {
    CounterKey probe = batch.key(i);
    long w = batch.window(i);
    long d = batch.delta(i);
    while (true) {
      TwoLayerCounter c = counters.get(probe);
      if (c == null) {
        if (counters.size() >= maxCounters) {
          return false;
        }
        c = counters.computeIfAbsent(probe.copy(), TwoLayerCounter::new);
      }
      if (count(batch, i, c, w, d, sync)) {
        return true;
      }
      if (!c.gone) {
        return false;
      }
    }
  }

  /** Counts in {@code c}; false when it is gone, or {@code w} is older than its window. */
  private boolean count(TwoLayerBatch batch, int i, TwoLayerCounter c, long w, long d, long sync) {
    boolean enqueue;
    long dueAt;
    synchronized (c) {
      if (c.gone || w < c.window) {
        return false; // an older window (this instance's clock lags): counted in the store
      }
      // A queued counter is due sooner in a new window, or under a shorter interval: the scan is
      // told of it again.
      boolean sooner = c.queued && sync < c.syncMillis;
      if (w > c.window) {
        sooner |= c.queued;
        c.roll(w);
      }
      c.syncMillis = sync;
      c.unsynced += d;
      c.own += d;
      batch.counted(i, c.shared + c.inflight + c.unsynced, c.previous);
      enqueue = !c.queued || sooner;
      c.queued = true;
      // A window's first count is pushed at the next tick; a counter queued again, an interval
      // after its last push.
      dueAt = c.lastSync == Long.MIN_VALUE || enqueue ? c.dueAt() : Long.MAX_VALUE;
    }
    this.sync.queue(c, enqueue, dueAt);
    return true;
  }

  /**
   * Takes back refunded permits from local counters; returns the updates that are not local, for
   * the shared store.
   */
  @Override
  public List<CounterUpdate> refundLocally(List<CounterUpdate> updates) {
    List<CounterUpdate> rest = new ArrayList<>(0);
    for (CounterUpdate u : updates) {
      TwoLayerCounter c =
          counters.get(new CounterKey().set(u.policy(), u.identity(), u.periodMillis()));
      boolean done = false;
      boolean enqueue = false;
      long dueAt = Long.MAX_VALUE;
      if (c != null) {
        synchronized (c) {
          if (u.window() == c.window) {
            c.unsynced -= u.delta();
            c.own -= u.delta();
            done = true;
            if (c.unsynced < 0 && !c.queued) {
              // Pushed before it was refunded: the store is given it back with the next push.
              enqueue = true;
              c.queued = true;
              dueAt = c.dueAt();
            }
          } else if (u.window() == c.window - 1) {
            // What was not pushed yet is taken back here; what was, from the shared store.
            long local = Math.max(0, Math.min(c.oldUnsynced, u.delta()));
            c.oldUnsynced -= local;
            c.previous = Math.max(0, c.previous - u.delta());
            if (local < u.delta()) {
              rest.add(
                  new CounterUpdate(
                      u.policy(), u.identity(), u.periodMillis(), u.window(), u.delta() - local));
            }
            done = true;
          }
        }
      }
      if (enqueue) {
        sync.queue(c, true, dueAt);
      }
      if (!done) {
        rest.add(u);
      }
    }
    return rest;
  }

  /**
   * Syncs every {@value #TICK_MILLIS} ms from now on; the task ends when the store is garbage
   * collected, so a store no longer used does not stay reachable from the scheduler.
   */
  private synchronized void startSyncer() {
    if (started) {
      return;
    }
    java.lang.ref.WeakReference<TwoLayerStore> self = new java.lang.ref.WeakReference<>(this);
    var unused =
        scheduler
            .orElseThrow()
            .scheduleWithFixedDelay(
                () -> {
                  TwoLayerStore s = self.get();
                  if (s == null) {
                    throw new java.util.concurrent.CancellationException("store collected");
                  }
                  s.tick();
                },
                TICK_MILLIS,
                TICK_MILLIS,
                TimeUnit.MILLISECONDS);
    started = true;
  }

  private void tick() {
    try {
      syncDue();
      if (++ticks % SWEEP_EVERY_TICKS == 0) {
        sweep();
      }
    } catch (RuntimeException e) {
      LOG.warn("two-layer sync failed", e);
    }
  }

  /**
   * Pushes every counter that is due in one batch, and reads the fleet's totals back ({@link
   * TwoLayerSync#syncDue}).
   */
  @Override
  public void syncDue() {
    sync.syncDue();
  }

  /** Pushes every counter's unsynced count at once ({@link TwoLayerSync#flush}). */
  @Override
  public boolean flush(long timeoutMillis) {
    return sync.flush(timeoutMillis);
  }

  /** Drops counters whose windows are over and that have nothing left to push. */
  void sweep() {
    long now = clock.millis();
    for (java.util.Iterator<Map.Entry<CounterKey, TwoLayerCounter>> it =
            counters.entrySet().iterator();
        it.hasNext(); ) {
      Map.Entry<CounterKey, TwoLayerCounter> e = it.next();
      TwoLayerCounter c = e.getValue();
      synchronized (c) {
        long nowWindow = Math.floorDiv(now, e.getKey().periodMillis());
        if (c.window < nowWindow - 2
            && !c.queued
            && c.inflight == 0
            && c.unsynced == 0
            && c.oldUnsynced == 0) {
          c.gone = true;
          it.remove();
        }
      }
    }
  }

  int localCounters() {
    return counters.size();
  }
}
