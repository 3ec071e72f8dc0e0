package dev.sluice.engine;

import dev.sluice.OnStoreFailure;
import dev.sluice.spi.CounterBatch;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterUpdate;
import dev.sluice.spi.Counts;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The counters a policy with {@link OnStoreFailure#LOCAL} is counted in while the shared store
 * fails: this instance's memory, exact, with the store's contract (windows with their previous
 * window, running counters raised to their floor, counts never below 0). A counter starts from the
 * store's last answer ({@link #seed}); what is admitted here is pushed to the store when it answers
 * again ({@link LastCounts}). A counter not written for two of its periods is forgotten, swept at
 * most once a second; at most {@link #MAX_COUNTERS} are kept, and beyond them a new counter fails
 * as the store did. Thread-safe.
 */
final class LocalCounters implements CounterStore {

  /** The most counters kept, as the in-memory store's default. */
  static final int MAX_COUNTERS = 1_000_000;

  private static final long SWEEP_EVERY_MILLIS = 1_000;

  private final InstantSource clock;
  private final int maxCounters;
  private final Map<CounterKey, Cell> cells = new ConcurrentHashMap<>();
  private final AtomicLong nextSweep = new AtomicLong();

  LocalCounters(InstantSource clock, int maxCounters) {
    this.clock = clock;
    this.maxCounters = maxCounters;
  }

  /** One counter; every field is guarded by its monitor. */
  private static final class Cell {
    final long periodMillis;
    long window = Long.MIN_VALUE;
    long current;
    long previous;
    long touchedMillis;
    boolean gone;

    /** The store answer this counter was last seeded from ({@link LastCounts.Seed}). */
    Object seedSource;

    long seedGeneration;

    Cell(long periodMillis) {
      this.periodMillis = periodMillis;
    }

    /**
     * Adds {@code delta} to {@code w}, or raises a running value to {@code floor} first and keeps
     * the result only when it is at most {@code ceiling}.
     */
    long add(long w, long delta, long floor, long ceiling, long now) {
      touchedMillis = now;
      if (floor > 0) {
        long v = saturatedSum(Math.max(current, floor), delta);
        if (v <= ceiling) {
          current = v;
        }
        return v;
      }
      if (w == window - 1) {
        previous = saturatedSum(previous, delta);
        return previous;
      }
      if (w != window) {
        previous = w == window + 1 ? current : 0;
        current = 0;
        window = w;
      }
      current = saturatedSum(current, delta);
      return current;
    }

    long previousOf(long w, long floor) {
      return floor > 0 || w != window ? 0 : previous;
    }

    /** Subtracts a refund; a count pinned at {@link Long#MAX_VALUE} stays pinned. */
    void subtract(long w, long delta, boolean running) {
      if (running || w == window) {
        current = lowered(current, delta);
      } else if (w == window - 1) {
        previous = lowered(previous, delta);
      }
    }
  }

  @Override
  public void increment(CounterBatch batch) {
    long now = clock.millis();
    sweepIfDue(now);
    long[] counts = new long[2];
    for (int i = 0; i < batch.size(); i++) {
      add(
          batch.key(i),
          batch.window(i),
          batch.delta(i),
          batch.floor(i),
          batch.ceiling(i),
          now,
          counts,
          0);
      batch.counted(i, counts[0], counts[1]);
    }
  }

  @Override
  public Counts increment(List<CounterUpdate> updates) {
    long now = clock.millis();
    sweepIfDue(now);
    long[] out = new long[2 * updates.size()];
    for (int i = 0; i < updates.size(); i++) {
      CounterUpdate u = updates.get(i);
      add(key(u), u.window(), u.delta(), u.floor(), u.ceiling(), now, out, 2 * i);
    }
    return Counts.of(out);
  }

  /**
   * Starts counter {@code key} from {@code seed} (the store's last count, at this instance's share)
   * unless it started from that same answer already: what was counted here since stands until the
   * store answers again.
   *
   * @throws IllegalStateException when the counters are full
   */
  void seed(CounterKey key, LastCounts.Seed seed, boolean running) {
    long now = clock.millis();
    while (true) {
      Cell c = cell(key, true);
      synchronized (c) {
        if (c.gone) {
          continue;
        }
        if (c.seedSource != seed.source() || c.seedGeneration != seed.generation()) {
          c.seedSource = seed.source();
          c.seedGeneration = seed.generation();
          c.current = seed.current();
          if (!running) {
            c.window = seed.window();
            c.previous = seed.previous();
          }
          c.touchedMillis = now;
        }
        return;
      }
    }
  }

  /** Counts one update; its count at {@code out[at]}, the previous window's at {@code at + 1}. */
  private void add(
      CounterKey key, long w, long delta, long floor, long ceiling, long now, long[] out, int at) {
    while (true) {
      Cell c = cell(key, true);
      synchronized (c) {
        if (!c.gone) {
          out[at] = c.add(w, delta, floor, ceiling, now);
          out[at + 1] = c.previousOf(w, floor);
          return;
        }
      }
    }
  }

  private static CounterKey key(CounterUpdate u) {
    return new CounterKey().set(u.policy(), u.identity(), u.periodMillis());
  }

  @Override
  public void decrement(List<CounterUpdate> updates) {
    for (CounterUpdate u : updates) {
      Cell c = cell(key(u), false);
      if (c != null) {
        synchronized (c) {
          c.subtract(u.window(), u.delta(), u.running());
        }
      }
    }
  }

  /** The cell of {@code key}; a new one when {@code create} (and room is left), else null. */
  private Cell cell(CounterKey key, boolean create) {
    Cell c = cells.get(key);
    if (c != null || !create) {
      return c;
    }
    if (cells.size() >= maxCounters) {
      throw new IllegalStateException(
          "local counters full (" + maxCounters + "): deciding as the store failed");
    }
    return cells.computeIfAbsent(key.copy(), k -> new Cell(k.periodMillis()));
  }

  /** Forgets counters not written for two of their periods, at most once a second. */
  private void sweepIfDue(long now) {
    long due = nextSweep.get();
    if (now < due || !nextSweep.compareAndSet(due, now + SWEEP_EVERY_MILLIS)) {
      return;
    }
    cells.forEach(
        (k, c) -> {
          synchronized (c) {
            if (now - c.touchedMillis > 2 * c.periodMillis) {
              c.gone = true;
              cells.remove(k, c);
            }
          }
        });
  }

  /** Counters kept, for tests. */
  int size() {
    return cells.size();
  }

  /**
   * {@code count − delta}, never below 0; a saturated count stays saturated, since what it would
   * hold past {@link Long#MAX_VALUE} is unknown and a refund from it could only lose count.
   */
  private static long lowered(long count, long delta) {
    return count == Long.MAX_VALUE ? count : Math.max(0, count - delta);
  }

  private static long saturatedSum(long a, long b) {
    long sum = a + b;
    return ((a ^ sum) & (b ^ sum)) < 0 ? Long.MAX_VALUE : sum;
  }
}
