package dev.sluice.bench;

import dev.sluice.spi.CounterStore;
import dev.sluice.store.inmemory.InMemoryCounterStore;

/** A benchmark's counter store: in this JVM, or on a memcached it starts and stops. */
final class BenchStore implements AutoCloseable {

  private final BenchMemcached memcached;
  private final CounterStore counters;

  private BenchStore(boolean onMemcached) {
    this.memcached = onMemcached ? BenchMemcached.start() : null;
    this.counters = onMemcached ? memcached.store() : InMemoryCounterStore.create();
  }

  /** A memcached store for {@code "memcached"}, an in-memory one otherwise. */
  static BenchStore open(String name) {
    return new BenchStore(name.equals("memcached"));
  }

  CounterStore counters() {
    return counters;
  }

  @Override
  public void close() {
    counters.close();
    if (memcached != null) {
      memcached.close();
    }
  }
}
