package dev.sluice.store.inmemory;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Policy;
import com.github.benmanes.caffeine.cache.RemovalCause;
import dev.sluice.spi.CounterBatch;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterUpdate;
import dev.sluice.spi.SharedValues;
import java.time.InstantSource;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Counters in this JVM: exact under contention, bounded in number, and reclaimed once their windows
 * are too old to matter. For one instance; a fleet shares a networked store.
 *
 * <p>Each counter (rule, identity, period) keeps its current and previous window. At most {@code
 * maximumCounters} counters live at once: a flood of distinct identities evicts the least valuable
 * (Caffeine's W-TinyLFU), which at worst forgets a client's count, never grows the heap. A counter
 * is dropped once the window after the one after its newest has begun (three of its periods since
 * it was last counted, at most), swept a few at a time as new counters arrive.
 *
 * <p>A decision through {@link #increment(CounterBatch)} allocates nothing once its counters exist:
 * the lookup uses the batch's own key ({@link CounterBatch#key}), and a counter is its own key and
 * a lock-free pair of windows. A key remembers the counter found for it ({@link
 * CounterKey#stored}), so an outcome that counts the same client again skips the lookup. A lookup
 * does not tell the eviction policy of every use: one add in {@value #RECORD_EVERY} does, which
 * keeps the frequencies it ranks counters by and spares the rest its bookkeeping.
 *
 * <p>Thread-safe; {@link #increment} and {@link #decrement} complete before they return.
 */
public final class InMemoryCounterStore implements CounterStore {

  /** Live counters unless told otherwise. */
  public static final long DEFAULT_MAXIMUM_COUNTERS = 1_000_000;

  /** How many counters each new counter's arrival checks for expiry. */
  private static final int SWEEP_PER_INSERT = 8;

  /** One add in this many (by the counter's value) is told to the eviction policy. */
  private static final int RECORD_EVERY = 64;

  private final Cache<CounterKey, Counter> counters;
  private final Policy<CounterKey, Counter> policy;
  private final ConcurrentMap<CounterKey, Counter> map;
  private final InstantSource clock;
  private final ReentrantLock sweeping = new ReentrantLock();
  private Iterator<Map.Entry<CounterKey, Counter>> sweep;
  private final InMemoryValues values;

  private InMemoryCounterStore(Builder b) {
    this.clock = b.clock;
    this.values = new InMemoryValues(b.clock);
    this.counters =
        Caffeine.newBuilder()
            .maximumSize(b.maximumCounters)
            // Maintenance (eviction) runs on the calling thread: bounded at every moment, and no
            // background thread to own.
            .executor(Runnable::run)
            .evictionListener((CounterKey k, Counter c, RemovalCause cause) -> c.removed = true)
            .build();
    this.map = counters.asMap();
    this.policy = counters.policy();
  }

  /** A store with the default bound and the system clock. */
  public static InMemoryCounterStore create() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  @Override
  public void increment(CounterBatch batch) {
    for (int i = 0, n = batch.size(); i < n; i++) {
      CounterKey key = batch.key(i);
      Counter c =
          key.stored() instanceof Counter last && last.owner == this && !last.removed
              ? last
              : find(key);
      long floor = batch.floor(i);
      long value =
          floor > 0
              ? c.raise(batch.window(i), floor, batch.delta(i), batch, i)
              : c.add(batch.window(i), batch.delta(i), batch, i);
      if (value % RECORD_EVERY == 0) {
        var unused = counters.getIfPresent(c);
      }
    }
  }

  @Override
  public long[] increment(List<CounterUpdate> updates) {
    long[] out = new long[2 * updates.size()];
    increment(
        new CounterBatch() {
          @Override
          public int size() {
            return updates.size();
          }

          @Override
          public String rule(int i) {
            return updates.get(i).rule();
          }

          @Override
          public String identity(int i) {
            return updates.get(i).identity();
          }

          @Override
          public long periodMillis(int i) {
            return updates.get(i).periodMillis();
          }

          @Override
          public long window(int i) {
            return updates.get(i).window();
          }

          @Override
          public long delta(int i) {
            return updates.get(i).delta();
          }

          @Override
          public long floor(int i) {
            return updates.get(i).floor();
          }

          @Override
          public void counted(int i, long current, long previous) {
            out[2 * i] = current;
            out[2 * i + 1] = previous;
          }
        });
    return out;
  }

  /** The counter of {@code key}, a new one if none is stored; remembered in the key. */
  private Counter find(CounterKey key) {
    Counter c = policy.getIfPresentQuietly(key);
    if (c == null) {
      // After sweeping a few expired ones.
      sweep(SWEEP_PER_INSERT);
      Counter fresh = new Counter(this, key);
      c = counters.get(fresh, k -> fresh);
    }
    key.remember(c);
    return c;
  }

  @Override
  public void decrement(List<CounterUpdate> updates) {
    CounterKey probe = new CounterKey();
    for (CounterUpdate u : updates) {
      Counter c = policy.getIfPresentQuietly(probe.set(u.rule(), u.identity(), u.periodMillis()));
      if (c == null) {
        continue;
      }
      if (u.running()) {
        c.lower(u.delta());
      } else {
        c.subtract(u.window(), u.delta());
      }
    }
  }

  /**
   * Checks up to {@code budget} counters, resuming where the last sweep stopped, and drops the
   * expired ones; skipped when another thread is sweeping.
   */
  private void sweep(long budget) {
    if (!sweeping.tryLock()) {
      return;
    }
    try {
      long now = clock.millis();
      for (long k = 0; k < budget; k++) {
        if (sweep == null || !sweep.hasNext()) {
          sweep = map.entrySet().iterator();
          if (!sweep.hasNext()) {
            return;
          }
        }
        Map.Entry<CounterKey, Counter> e = sweep.next();
        if (expired(e.getValue(), now) && map.remove(e.getKey(), e.getValue())) {
          e.getValue().removed = true;
        }
      }
    } finally {
      sweeping.unlock();
    }
  }

  /**
   * Whether no one can ask for the counter any more: its newest window is neither current nor the
   * previous of a current one, whatever the identity's window offset.
   */
  static boolean expired(Counter c, long now) {
    long newest = c.newestWindow();
    // A counter that holds no window yet was just created, and its first add is on its way: a
    // sweep that dropped it would let that add and a concurrent one land in two counters.
    return newest != Long.MIN_VALUE
        && Math.floorDiv(now, c.periodMillis()) >= saturatedAdd(newest, 3);
  }

  private static long saturatedAdd(long a, long b) {
    return a > Long.MAX_VALUE - b ? Long.MAX_VALUE : a + b;
  }

  /** How many counters are alive, after dropping every expired one and pending evictions. */
  public long liveCounters() {
    long now = clock.millis();
    map.values()
        .removeIf(
            c -> {
              boolean expired = expired(c, now);
              if (expired) {
                c.removed = true;
              }
              return expired;
            });
    counters.cleanUp();
    return counters.estimatedSize();
  }

  /** Knobs and leases, for this JVM, on the store's clock. */
  @Override
  public java.util.Optional<SharedValues> sharedValues() {
    return java.util.Optional.of(values);
  }

  @Override
  public String toString() {
    return "in-memory store (" + counters.estimatedSize() + " counters)";
  }

  /** Configures an {@link InMemoryCounterStore}. */
  public static final class Builder {
    private long maximumCounters = DEFAULT_MAXIMUM_COUNTERS;
    private InstantSource clock = InstantSource.system();

    private Builder() {}

    /** The most counters alive at once (one per rule, identity and period). */
    public Builder maximumCounters(long maximumCounters) {
      if (maximumCounters <= 0) {
        throw new IllegalArgumentException("maximumCounters must be > 0");
      }
      this.maximumCounters = maximumCounters;
      return this;
    }

    /** The clock that ages counters; give it the limiter's clock. */
    public Builder clock(InstantSource clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    public InMemoryCounterStore build() {
      return new InMemoryCounterStore(this);
    }
  }
}
