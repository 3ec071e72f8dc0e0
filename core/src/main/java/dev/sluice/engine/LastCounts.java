package dev.sluice.engine;

import dev.sluice.OnStoreFailure;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterUpdate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the shared store last said of each counter of a policy with {@link OnStoreFailure#LOCAL},
 * and what this instance admitted in memory since: the two halves of one budget.
 *
 * <p>While the store fails, a local decision starts from the store's last count for its window,
 * scaled to the instance's share ({@link #seed}): a fleet that loses the store mid-window goes on
 * from what it had admitted, not from zero. What an instance admits in memory is owed to the store
 * ({@link #owe}) and added to the counter in the next store call that carries it ({@link
 * #withPushes}), in the same round trip as that decision's increment: once the store answers, its
 * count holds every instance's local admissions. A push whose call fails is kept and sent again
 * (when the failed call was applied late, it is counted twice: a refusal too many, never an
 * admission too many), unless the store hands over its late answer ({@link
 * dev.sluice.spi.StoreTimeoutException#lateCounts}): the push is then owed again only if that
 * answer does not show it written.
 *
 * <p>Concurrency slots are neither seeded nor pushed: a slot taken in memory is given back in
 * memory. A counter not written for two of its periods, with nothing owed, is forgotten, swept at
 * most once a second; at most {@link #MAX_COUNTERS} are kept, and beyond them a counter is not
 * remembered (its local decisions start from zero, as with no store answer). Thread-safe.
 */
final class LastCounts {

  static final int MAX_COUNTERS = 1_000_000;

  private static final long SWEEP_EVERY_MILLIS = 1_000;

  private final Map<CounterKey, Memo> memos = new ConcurrentHashMap<>();
  private final AtomicLong nextSweep = new AtomicLong();
  private final int maxCounters;

  /** How many counters owe the store something: none on the hot path of a healthy store. */
  private final AtomicInteger owing = new AtomicInteger();

  LastCounts(int maxCounters) {
    this.maxCounters = maxCounters;
  }

  /** One counter's last store answer and local debt; every field is guarded by its monitor. */
  static final class Memo {
    final long periodMillis;

    /** Bumped at every store answer: a local counter seeded from an older one seeds again. */
    long generation;

    boolean seen;
    long window;
    long current;
    long previous;

    /**
     * Local admissions owed to the store, in the store's units, for {@code oweWindow} and before.
     */
    long oweWindow = Long.MIN_VALUE;

    long owed;
    long owedBefore;

    /** A running counter's local value after the last local admission. */
    long localValue;

    /** The tier and instances the debt was counted for, to push it on its own ({@link #owed}). */
    dev.sluice.algorithm.TierLimit limit;

    int instances;

    long touchedMillis;

    /**
     * What this instance admitted itself on a window counter, through the store and in memory:
     * {@code own} in {@code ownWindow}, {@code ownBefore} in the window before. The store's count
     * holds at least that unless it lost writes.
     */
    long ownWindow = Long.MIN_VALUE;

    long own;
    long ownBefore;

    /**
     * A running counter's level had it counted only what this instance admitted, each raised to its
     * floor first: the store's level is at least that unless it lost writes.
     */
    long ownLevel;

    Memo(long periodMillis) {
      this.periodMillis = periodMillis;
    }

    /** Adds an admission of {@code delta} in {@code window} to what this instance admitted. */
    void admit(long window, long delta) {
      if (window == ownWindow) {
        own = saturatedSum(own, delta);
      } else if (window == ownWindow - 1) {
        ownBefore = saturatedSum(ownBefore, delta);
      } else if (window > ownWindow) {
        ownBefore = window == ownWindow + 1 ? own : 0;
        own = delta;
        ownWindow = window;
      }
    }

    /** What this instance admitted in {@code window}. */
    long ownIn(long window) {
      return window == ownWindow ? own : window == ownWindow - 1 ? ownBefore : 0;
    }

    boolean owes() {
      return owed > 0 || owedBefore > 0;
    }
  }

  /**
   * Records the store's answer for the call's counters of policies that limit locally on failure.
   * The call's counters hold the answer ({@link Call#counted}). A window count below what this
   * instance admitted in that window (plus this request) is raised to it first, so the decision is
   * judged on it: a store that lost writes (a failover, a restart) does not give this instance
   * again what it admitted, through the store or in memory. Refunds never lower a count below it,
   * since what is refunded was never admitted.
   */
  void answered(Call call, long now) {
    sweepIfDue(now);
    for (int i = 0; i < call.size(); i++) {
      Counter c = call.counter(i);
      if (c.entry.policy.local == null || c.limit.heldUntilReleased()) {
        continue;
      }
      Memo m = memo(c.key, true);
      if (m == null) {
        continue;
      }
      synchronized (m) {
        long floor = call.floor(i);
        if (floor > 0) {
          long atLeast = saturatedSum(Math.max(m.ownLevel, floor), call.delta(i));
          if (c.current < atLeast) {
            c.current = atLeast;
          }
        } else {
          long atLeast = saturatedSum(m.ownIn(c.window), call.delta(i));
          if (c.current < atLeast) {
            c.current = atLeast;
          }
          long before = m.ownIn(c.window - 1);
          if (c.previous < before) {
            c.previous = before;
          }
        }
        m.generation++;
        m.seen = true;
        m.window = c.window;
        m.current = c.current;
        m.previous = c.previous;
        m.touchedMillis = now;
      }
    }
  }

  /**
   * Adds an admitted decision's increments to what this instance admitted ({@link #answered} judges
   * on no less), but a failing shadow policy's, which is refunded.
   */
  void admitted(Call call) {
    for (int i = 0; i < call.size(); i++) {
      Counter c = call.counter(i);
      if (c.entry.policy.local == null || c.limit.heldUntilReleased() || c.entry.shadowFailed) {
        continue;
      }
      Memo m = memo(c.key, false);
      if (m != null) {
        synchronized (m) {
          long floor = call.floor(i);
          if (floor > 0) {
            m.ownLevel = saturatedSum(Math.max(m.ownLevel, floor), call.delta(i));
          } else {
            m.admit(c.window, call.delta(i));
          }
        }
      }
    }
  }

  /**
   * The seed of one local counter: what the store last said of fleet counter {@code key} in window
   * {@code window}, in the local share's units. Null when the store never answered for it.
   *
   * @param instances how many instances share the limit: a window's count is divided by it
   */
  Seed seed(CounterKey key, long window, boolean running, int instances) {
    Memo m = memo(key, false);
    if (m == null) {
      return null;
    }
    synchronized (m) {
      if (!m.seen) {
        return null;
      }
      if (running) {
        // A token bucket's level in time is the same whatever its share: burst × interval is.
        return new Seed(m, m.generation, m.window, m.current, 0);
      }
      long current = m.window == window ? m.current : 0;
      long previous = m.window == window ? m.previous : m.window == window - 1 ? m.current : 0;
      return new Seed(
          m, m.generation, window, share(current, instances), share(previous, instances));
    }
  }

  /**
   * A local counter's starting point, from one store answer ({@code source}, {@code generation}).
   */
  record Seed(Object source, long generation, long window, long current, long previous) {}

  private static long share(long count, int instances) {
    return -Math.floorDiv(-count, instances);
  }

  /**
   * Owes the store {@code delta} (in its units) on fleet counter {@code key} in {@code window}: an
   * admission made in memory. A running counter's debt is one amount, whatever the window, and
   * {@code localValue} is its local value after the admission.
   */
  void owe(
      CounterKey key,
      long window,
      dev.sluice.algorithm.TierLimit limit,
      int instances,
      long delta,
      long localValue,
      long now) {
    boolean running = limit.floor(now) > 0;
    Memo m = memo(key, true);
    if (m == null) {
      return;
    }
    synchronized (m) {
      boolean owed = m.owes();
      m.limit = limit;
      m.instances = instances;
      if (running) {
        m.oweWindow = window;
      } else if (window == m.oweWindow + 1) {
        m.owedBefore = m.owed;
        m.owed = 0;
      } else if (window != m.oweWindow) {
        m.owedBefore = 0;
        m.owed = 0;
      }
      m.oweWindow = window;
      m.owed = saturatedSum(m.owed, delta);
      m.localValue = Math.max(m.localValue, localValue);
      if (!running) {
        m.admit(window, delta);
      } else if (instances == 1) {
        // With more instances a push is what is left of the share in the fleet's time, which may
        // be less than the local admissions: the store's level is then not known to hold them.
        m.ownLevel = saturatedSum(Math.max(m.ownLevel, limit.floor(now)), delta);
      }
      m.touchedMillis = now;
      if (!owed) {
        owing.incrementAndGet();
      }
    }
  }

  /**
   * The call with what its counters owe added to their increments, or the call itself when they owe
   * nothing (always, while no counter owes). Each push is taken out of the debt; {@link
   * Pushes#failed} puts it back.
   */
  TwoLayerBatch withPushes(Call call) {
    // Small enough to be inlined into every decision: the walk below is not, and runs only when a
    // counter owes.
    return owing.get() == 0 ? call : pushes(call);
  }

  private TwoLayerBatch pushes(Call call) {
    Pushes pushes = null;
    for (int i = 0; i < call.size(); i++) {
      Counter c = call.counter(i);
      if (c.entry.policy.local == null || c.limit.heldUntilReleased()) {
        continue;
      }
      Memo m = memo(c.key, false);
      if (m == null) {
        continue;
      }
      synchronized (m) {
        if (!m.owes()) {
          continue;
        }
        if (pushes == null) {
          pushes = new Pushes(this, call);
        }
        long floor = call.floor(i);
        if (floor > 0) {
          // What is left of the local debt, in the fleet's time: the instance's share of it.
          int n = c.entry.policy.instances();
          long left = Math.max(0, m.localValue - floor) / n;
          pushes.add(i, Math.min(m.owed, left), m, m.owed, true);
          m.owed = 0;
        } else if (m.oweWindow == c.window) {
          pushes.add(i, m.owed, m, m.owed, false);
          if (m.owedBefore > 0) {
            pushes.extra(i, c.window - 1, m.owedBefore, m);
          }
          m.owed = 0;
          m.owedBefore = 0;
        } else if (m.oweWindow == c.window - 1) {
          pushes.extra(i, c.window - 1, m.owed, m);
          m.owed = 0;
          m.owedBefore = 0;
        } else {
          // Owed for windows no decision reads any more.
          m.owed = 0;
          m.owedBefore = 0;
        }
        if (!m.owes()) {
          owing.decrementAndGet();
        }
      }
    }
    return pushes == null ? call : pushes;
  }

  /**
   * Takes every debt out, as updates to send on their own: for the store that answers again before
   * a decision carries them. {@code done} with the call's failure (or null) puts them back on a
   * failure. Empty while nothing is owed.
   */
  Debts owed(long now) {
    if (owing.get() == 0) {
      return null;
    }
    List<CounterUpdate> updates = new ArrayList<>();
    List<Runnable> undo = new ArrayList<>();
    memos.forEach(
        (k, m) -> {
          synchronized (m) {
            if (!m.owes() || m.limit == null) {
              return;
            }
            long floor = m.limit.floor(now);
            long period = k.periodMillis();
            if (floor > 0) {
              long left = Math.max(0, m.localValue - floor) / m.instances;
              long push = Math.min(m.owed, left);
              if (push > 0) {
                long window = Math.floorDiv(now, period);
                updates.add(
                    new CounterUpdate(k.policy(), k.identity(), period, window, push, floor));
                long owed = m.owed;
                undo.add(() -> putBack(m, window, owed, false, true));
              }
            } else {
              long offset = m.limit.offset(k.identity());
              long window = Math.floorDiv(now - offset, period);
              long w = m.oweWindow;
              if (w == window || w == window - 1) {
                if (m.owed > 0) {
                  updates.add(new CounterUpdate(k.policy(), k.identity(), period, w, m.owed));
                  long owed = m.owed;
                  undo.add(() -> putBack(m, w, owed, false, false));
                }
                if (w == window && m.owedBefore > 0) {
                  updates.add(
                      new CounterUpdate(k.policy(), k.identity(), period, w - 1, m.owedBefore));
                  long before = m.owedBefore;
                  undo.add(() -> putBack(m, w - 1, before, true, false));
                }
              }
            }
            m.owed = 0;
            m.owedBefore = 0;
            owing.decrementAndGet();
          }
        });
    return updates.isEmpty() ? null : new Debts(updates, undo);
  }

  /** Debts taken out to push on their own, and how to put them back if the push fails. */
  record Debts(List<CounterUpdate> updates, List<Runnable> undo) {
    void failed() {
      undo.forEach(Runnable::run);
    }
  }

  /** Puts a failed push back into its counter's debt. */
  void putBack(Memo m, long window, long owed, boolean before, boolean running) {
    synchronized (m) {
      boolean was = m.owes();
      if (running) {
        m.owed = saturatedSum(m.owed, owed);
      } else if (before) {
        if (m.oweWindow == window + 1) {
          m.owedBefore = saturatedSum(m.owedBefore, owed);
        } else if (m.oweWindow == window || m.oweWindow == Long.MIN_VALUE) {
          m.oweWindow = window;
          m.owed = saturatedSum(m.owed, owed);
        }
      } else if (m.oweWindow == window || m.oweWindow == Long.MIN_VALUE) {
        m.oweWindow = window;
        m.owed = saturatedSum(m.owed, owed);
      } else if (m.oweWindow == window + 1) {
        m.owedBefore = saturatedSum(m.owedBefore, owed);
      }
      if (!was && m.owes()) {
        owing.incrementAndGet();
      }
    }
  }

  private Memo memo(CounterKey key, boolean create) {
    Memo m = memos.get(key);
    if (m != null || !create) {
      return m;
    }
    if (memos.size() >= maxCounters) {
      return null;
    }
    return memos.computeIfAbsent(key.copy(), k -> new Memo(k.periodMillis()));
  }

  /**
   * Forgets counters not written for two of their periods that owe nothing, at most once a second.
   */
  private void sweepIfDue(long now) {
    long due = nextSweep.get();
    if (now < due || !nextSweep.compareAndSet(due, now + SWEEP_EVERY_MILLIS)) {
      return;
    }
    memos.forEach(
        (k, m) -> {
          synchronized (m) {
            if (!m.owes() && now - m.touchedMillis > 2 * m.periodMillis) {
              memos.remove(k, m);
            }
          }
        });
  }

  /** Counters remembered, for tests. */
  int size() {
    return memos.size();
  }

  /** Whether any counter owes the store, for tests. */
  boolean owes() {
    return owing.get() > 0;
  }

  static long saturatedSum(long a, long b) {
    long sum = a + b;
    return ((a ^ sum) & (b ^ sum)) < 0 ? Long.MAX_VALUE : sum;
  }
}
