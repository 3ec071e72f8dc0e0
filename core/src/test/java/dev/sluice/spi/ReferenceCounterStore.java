package dev.sluice.spi;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The simplest correct store: one lock, exact, unbounded. Tests use it as a reference and to count
 * store calls; it can be told to fail.
 */
public final class ReferenceCounterStore implements CounterStore {

  private record Key(String policy, String identity, long period, long window) {}

  private final Map<Key, Long> counts = new HashMap<>();
  private final AtomicInteger increments = new AtomicInteger();
  private final AtomicInteger decrements = new AtomicInteger();
  private volatile RuntimeException failure;
  private final Map<String, SharedValues.Versioned> values = new HashMap<>();
  private final Map<String, Long> expiries = new HashMap<>();
  private long versions;
  private java.time.InstantSource clock = java.time.InstantSource.system();

  /** The clock that expires shared values with a time to live. */
  public synchronized ReferenceCounterStore clock(java.time.InstantSource clock) {
    this.clock = clock;
    return this;
  }

  private void expire(String name) {
    Long at = expiries.get(name);
    if (at != null && at <= clock.millis()) {
      values.remove(name);
      expiries.remove(name);
    }
  }

  /** Knobs and leases in a map (no expiry); they fail when the store is told to fail. */
  @Override
  public java.util.Optional<SharedValues> sharedValues() {
    return java.util.Optional.of(
        new SharedValues() {
          @Override
          public java.util.Optional<Versioned> get(String name) {
            synchronized (ReferenceCounterStore.this) {
              if (failure != null) {
                throw failure;
              }
              expire(name);
              return java.util.Optional.ofNullable(values.get(name));
            }
          }

          @Override
          public boolean compareAndSet(
              String name, long version, String value, java.time.Duration ttl) {
            synchronized (ReferenceCounterStore.this) {
              if (failure != null) {
                throw failure;
              }
              expire(name);
              Versioned v = values.get(name);
              if ((v == null ? 0 : v.version()) != version) {
                return false;
              }
              values.put(name, new Versioned(value, ++versions));
              if (ttl.isZero()) {
                expiries.remove(name);
              } else {
                expiries.put(name, clock.millis() + ttl.toMillis());
              }
              return true;
            }
          }
        });
  }

  private volatile RuntimeException late;

  @Override
  public synchronized Counts increment(List<CounterUpdate> updates) {
    increments.incrementAndGet();
    if (failure != null) {
      throw failure;
    }
    long[] out = apply(updates);
    if (late != null) {
      throw late;
    }
    return Counts.of(out);
  }

  private long[] apply(List<CounterUpdate> updates) {
    long[] out = new long[updates.size() * 2];
    for (int i = 0; i < updates.size(); i++) {
      CounterUpdate u = updates.get(i);
      if (u.running()) {
        Key k = new Key(u.policy(), u.identity(), u.periodMillis(), Long.MIN_VALUE);
        long from = Math.max(counts.getOrDefault(k, 0L), u.floor());
        long v = saturatedSum(from, u.delta());
        if (v <= u.ceiling()) {
          counts.put(k, v);
        }
        out[2 * i] = v;
        continue;
      }
      Key k = new Key(u.policy(), u.identity(), u.periodMillis(), u.window());
      out[2 * i] = counts.merge(k, u.delta(), ReferenceCounterStore::saturatedSum);
      out[2 * i + 1] =
          counts.getOrDefault(
              new Key(u.policy(), u.identity(), u.periodMillis(), u.window() - 1), 0L);
    }
    return out;
  }

  @Override
  public synchronized void decrement(List<CounterUpdate> updates) {
    decrements.incrementAndGet();
    if (failure != null) {
      throw failure;
    }
    for (CounterUpdate u : updates) {
      counts.computeIfPresent(
          new Key(
              u.policy(),
              u.identity(),
              u.periodMillis(),
              u.running() ? Long.MIN_VALUE : u.window()),
          (k, v) -> Math.max(0, v - u.delta()));
    }
  }

  /** The count of one window, without changing it. */
  public synchronized long count(String policy, String identity, long period, long window) {
    return counts.getOrDefault(new Key(policy, identity, period, window), 0L);
  }

  /** How many increment calls (batches) the store has seen. */
  /** Forgets every count. */
  public synchronized void clear() {
    counts.clear();
  }

  public int incrementCalls() {
    return increments.get();
  }

  public int decrementCalls() {
    return decrements.get();
  }

  /**
   * Makes every later increment apply its changes and then throw {@code e}, as a timeout that
   * succeeds late does; null heals the store. Decrements go on working.
   */
  public void applyThenFail(RuntimeException e) {
    this.late = e;
  }

  /** Makes every later call throw {@code e}; null heals the store. */
  public void failWith(RuntimeException e) {
    this.failure = e;
  }

  private static long saturatedSum(long a, long b) {
    long sum = a + b;
    return ((a ^ sum) & (b ^ sum)) < 0 ? Long.MAX_VALUE : sum;
  }
}
