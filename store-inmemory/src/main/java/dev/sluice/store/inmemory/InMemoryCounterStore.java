package dev.sluice.store.inmemory;

import dev.sluice.spi.CounterBatch;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterUpdate;
import dev.sluice.spi.Counts;
import dev.sluice.spi.SharedValues;
import java.time.InstantSource;
import java.util.List;
import java.util.Objects;

/**
 * Counters in this JVM: exact under contention, bounded in number, and reclaimed once their windows
 * are too old to matter. For one instance; a fleet shares a networked store.
 *
 * <p>Each counter (policy, identity, period) keeps its current and previous window. At most {@code
 * maximumCounters} counters live at once: a flood of distinct identities evicts the least counted
 * of a few (see {@link CounterTable}), which at worst forgets a client's count, never grows the
 * heap. A counter of concurrency slots with a request in flight is never evicted; the bound is
 * exceeded only when every counter in the way has one, by at most one counter per request in
 * flight. A counter is dropped once the window after the one after its newest has begun (three of
 * its periods since it was last counted, at most), swept a few at a time as new counters arrive.
 *
 * <p>A decision through {@link #increment(CounterBatch)} allocates nothing once its counters exist:
 * the lookup uses the batch's own key ({@link CounterBatch#key}), and a counter is its own key and
 * a lock-free pair of windows, held by the table's slot itself. A key remembers the counter found
 * for it ({@link CounterKey#stored}), so an outcome that counts the same client again skips the
 * lookup.
 *
 * <p>Thread-safe; {@link #increment} and {@link #decrement} complete before they return.
 */
public final class InMemoryCounterStore implements CounterStore {

  /** Live counters unless told otherwise. */
  public static final long DEFAULT_MAXIMUM_COUNTERS = 1_000_000;

  /** The most {@link Builder#maximumCounters} takes: a billion counters is some 100 GB of heap. */
  private static final long MAXIMUM_COUNTERS_LIMIT = 1L << 30;

  private final CounterTable counters;
  private final InMemoryValues values;

  private InMemoryCounterStore(Builder b) {
    this.values = new InMemoryValues(b.clock);
    this.counters =
        new CounterTable(
            b.maximumCounters, 4 * Runtime.getRuntime().availableProcessors(), b.clock);
  }

  /** {@return a store with the default bound and the system clock} */
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
      boolean slots = batch.released(i);
      Counter c;
      if (key.stored() instanceof Counter last && last.owner == this && !last.removed) {
        c = last;
      } else {
        c = counters.getOrCreate(key, this, slots);
        key.remember(c);
      }
      long floor = batch.floor(i);
      if (floor > 0) {
        c.raise(batch.window(i), floor, batch.delta(i), batch.ceiling(i), batch, i);
      } else {
        long w = batch.window(i);
        long delta = batch.delta(i);
        c.add(w, delta, batch, i);
        while (slots && c.removed && !c.unstored) {
          // The table dropped the counter as this slot landed in it (it held none before): take
          // the slot back and count it in the counter the table holds now.
          c.subtract(w, delta);
          c = counters.getOrCreate(key, this, true);
          key.remember(c);
          c.add(w, delta, batch, i);
        }
      }
    }
  }

  @Override
  public Counts increment(List<CounterUpdate> updates) {
    long[] out = new long[2 * updates.size()];
    increment(CounterBatch.of(updates, out));
    return Counts.of(out);
  }

  @Override
  public void decrement(List<CounterUpdate> updates) {
    CounterKey probe = new CounterKey();
    for (CounterUpdate u : updates) {
      Counter c = counters.get(probe.set(u.policy(), u.identity(), u.periodMillis()));
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
   * How many counters this store evicted to make room for new ones (its bound reached), under the
   * node name {@code in-memory}. An evicted counter starts again from zero if its client comes
   * back; a counter of concurrency slots with a request in flight is never evicted.
   */
  @Override
  public java.util.Map<String, Long> evictions() {
    return java.util.Map.of("in-memory", counters.evictions());
  }

  /** {@return how many counters are alive, after dropping every expired one} */
  public long liveCounters() {
    return counters.sweepAll();
  }

  /** Knobs and leases, for this JVM, on the store's clock. */
  @Override
  public java.util.Optional<SharedValues> sharedValues() {
    return java.util.Optional.of(values);
  }

  @Override
  public String toString() {
    return "in-memory store (" + counters.size() + " counters)";
  }

  /** Configures an {@link InMemoryCounterStore}. */
  public static final class Builder {
    private long maximumCounters = DEFAULT_MAXIMUM_COUNTERS;
    private InstantSource clock = InstantSource.system();

    private Builder() {}

    /** The most counters alive at once (one per policy, identity and period), up to 2^30. */
    public Builder maximumCounters(long maximumCounters) {
      if (maximumCounters <= 0 || maximumCounters > MAXIMUM_COUNTERS_LIMIT) {
        throw new IllegalArgumentException(
            "maximumCounters must be between 1 and "
                + MAXIMUM_COUNTERS_LIMIT
                + ": "
                + maximumCounters);
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
