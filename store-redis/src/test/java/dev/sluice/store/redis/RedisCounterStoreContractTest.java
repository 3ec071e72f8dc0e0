package dev.sluice.store.redis;

import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterStoreContract;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** Core's store contract against a real redis-server. */
class RedisCounterStoreContractTest extends CounterStoreContract {

  private static RedisServer server;
  private static final AtomicInteger STORES = new AtomicInteger();

  @BeforeAll
  static void startRedis() {
    server = RedisServer.start();
  }

  @AfterAll
  static void stopRedis() {
    if (server != null) {
      server.close();
    }
  }

  @Override
  protected CounterStore createStore() {
    // A prefix per test: each starts with an empty store. A generous timeout: correctness here,
    // not latency, and the threaded test queues many scripts on two cores.
    return RedisCounterStore.builder()
        .uri(server.uri())
        .prefix("contract" + STORES.incrementAndGet())
        .operationTimeout(Duration.ofSeconds(5))
        .build();
  }
}
