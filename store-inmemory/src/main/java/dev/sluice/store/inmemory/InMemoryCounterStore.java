package dev.sluice.store.inmemory;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterUpdate;
import java.time.InstantSource;
import java.util.List;
import java.util.Objects;

/**
 * Counters in this JVM: exact under contention, bounded in number, and reclaimed once their windows
 * are too old to matter. For one instance; a fleet shares a networked store.
 *
 * <p>Each counter (rule, identity, period) keeps its current and previous window. At most {@code
 * maximumCounters} counters live at once: a flood of distinct identities evicts the least valuable
 * (Caffeine's W-TinyLFU), which at worst forgets a client's count, never grows the heap. A counter
 * untouched for two of its periods is dropped (within about a second more: the timer wheel's
 * resolution).
 *
 * <p>Thread-safe; {@link #increment} and {@link #decrement} complete before they return.
 */
public final class InMemoryCounterStore implements CounterStore {

  /** Live counters unless told otherwise. */
  public static final long DEFAULT_MAXIMUM_COUNTERS = 1_000_000;

  private final Cache<Key, Counter> counters;

  private InMemoryCounterStore(Builder b) {
    InstantSource clock = b.clock;
    this.counters =
        Caffeine.newBuilder()
            .maximumSize(b.maximumCounters)
            .expireAfter(new TwoPeriods())
            .ticker(() -> clock.millis() * 1_000_000L)
            // Maintenance (eviction, expiry) runs on the calling thread: bounded at every moment,
            // and
            // no background thread to own.
            .executor(Runnable::run)
            .build();
  }

  /** A store with the default bound and the system clock. */
  public static InMemoryCounterStore create() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  @Override
  public long[] increment(List<CounterUpdate> updates) {
    int n = updates.size();
    long[] out = new long[2 * n];
    for (int i = 0; i < n; i++) {
      CounterUpdate u = updates.get(i);
      Counter c =
          counters.get(new Key(u.rule(), u.identity(), u.periodMillis()), k -> new Counter());
      c.add(u.window(), u.delta(), out, 2 * i);
    }
    return out;
  }

  @Override
  public void decrement(List<CounterUpdate> updates) {
    for (CounterUpdate u : updates) {
      Counter c = counters.getIfPresent(new Key(u.rule(), u.identity(), u.periodMillis()));
      if (c != null) {
        c.subtract(u.window(), u.delta());
      }
    }
  }

  /** How many counters are alive, after pending evictions and expiries are done. */
  public long liveCounters() {
    counters.cleanUp();
    return counters.estimatedSize();
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

  private record Key(String rule, String identity, long period) {}

  /**
   * A counter lives two of its periods past its last use: long enough to serve as a previous
   * window.
   */
  private static final class TwoPeriods implements Expiry<Key, Counter> {
    private static long life(Key k) {
      return k.period > Long.MAX_VALUE / 2_000_000L ? Long.MAX_VALUE : k.period * 2_000_000L;
    }

    @Override
    public long expireAfterCreate(Key k, Counter c, long now) {
      return life(k);
    }

    @Override
    public long expireAfterUpdate(Key k, Counter c, long now, long current) {
      return life(k);
    }

    @Override
    public long expireAfterRead(Key k, Counter c, long now, long current) {
      return life(k);
    }
  }
}
