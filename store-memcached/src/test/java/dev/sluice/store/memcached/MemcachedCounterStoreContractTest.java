package dev.sluice.store.memcached;

import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterStoreContract;
import dev.sluice.spi.SharedValuesContract;
import dev.sluice.testkit.Memcached;
import dev.sluice.testkit.MemcachedServer;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;

/** Core's store contract against a real memcached. */
@Memcached
class MemcachedCounterStoreContractTest extends CounterStoreContract
    implements SharedValuesContract {

  private static MemcachedServer server;
  private static final AtomicInteger STORES = new AtomicInteger();

  @BeforeAll
  static void startMemcached(MemcachedServer started) {
    server = started;
  }

  @Override
  protected CounterStore createStore() {
    // A prefix per test: each starts with an empty store. A generous timeout: correctness here,
    // not latency, and the threaded test queues many operations on two cores.
    return MemcachedCounterStore.builder()
        .servers(server.address())
        .prefix("contract" + STORES.incrementAndGet())
        .operationTimeout(Duration.ofSeconds(5))
        .build();
  }

  @Override
  protected int threads() {
    return 8;
  }

  @Override
  protected int incrementsPerThread() {
    return 500;
  }
}
