package dev.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.StoreStatus;
import dev.sluice.spi.FakeClock;
import dev.sluice.store.memcached.MemcachedCounterStore;
import dev.sluice.testkit.MemcachedServer;
import dev.sluice.testkit.TcpProxy;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A cold instance counts its first requests. Memcached behind a proxy that holds every reply 100 ms
 * each way, past the 50 ms operation timeout: the store's first decision waits for memcached's
 * answer (up to the connect timeout) and is counted, where it used to fail open; once memcached has
 * answered, a decision waits the operation timeout, and a reply that slow fails over as the rule
 * says.
 */
class ColdStartIT {

  @Test
  void aColdInstancesFirstDecisionWaitsForTheStoreAndIsCounted() throws Exception {
    try (MemcachedServer memcached = MemcachedServer.start();
        TcpProxy proxy = TcpProxy.to(memcached.port())) {
      try (MemcachedCounterStore store =
          MemcachedCounterStore.builder()
              .servers("127.0.0.1:" + proxy.port())
              .operationTimeout(Duration.ofMillis(50))
              .connectTimeout(Duration.ofSeconds(2))
              .build()) {
        proxy.delay(100);
        RateLimiter limiter =
            RateLimiter.fixedWindow(store)
                .clock(new FakeClock())
                .tier(5, Duration.ofMinutes(1))
                .build();
        Decision first = limiter.tryAcquire("client");
        assertEquals(StoreStatus.OK, first.storeStatus(), "the first decision was not counted");
        assertEquals(4, first.remaining());
        Decision warm = limiter.tryAcquire("client");
        assertEquals(
            StoreStatus.FAILED_OPEN,
            warm.storeStatus(),
            "a warm store waits the operation timeout");
      }
    }
  }
}
