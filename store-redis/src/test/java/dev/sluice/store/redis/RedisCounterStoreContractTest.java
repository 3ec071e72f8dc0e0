package dev.sluice.store.redis;

import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterStoreContract;
import dev.sluice.testkit.Redis;
import dev.sluice.testkit.RedisServer;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;

/** Core's store contract against a real redis-server. */
@Redis
class RedisCounterStoreContractTest extends CounterStoreContract {

  private static RedisServer server;
  private static final AtomicInteger STORES = new AtomicInteger();

  @BeforeAll
  static void startRedis(RedisServer started) {
    server = started;
  }

  @Override
  protected CounterStore createStore() {
    // A prefix per test: each starts with an empty store. A generous timeout: correctness here,
    // not latency, and the threaded test queues many scripts on two cores. The contract's running
    // counters have floors that are plain numbers, not times: taken as given, not moved onto
    // Redis's clock (RedisServerTimeTest covers that).
    return RedisCounterStore.builder()
        .uri(server.uri())
        .prefix("contract" + STORES.incrementAndGet())
        .operationTimeout(Duration.ofSeconds(5))
        .storeClock(false)
        .build();
  }
}
