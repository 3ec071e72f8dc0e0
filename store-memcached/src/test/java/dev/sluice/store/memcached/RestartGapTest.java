package dev.sluice.store.memcached;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.spi.CounterUpdate;
import dev.sluice.testkit.MemcachedServer;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A memcached restarted while the store is idle. spymemcached alone reconnects a second later, a
 * second of decisions the store cannot count (measured: 1,004–1,011 ms, ~920 calls at one a
 * millisecond); the store's own probe reconnects within tens of milliseconds, and a node that did
 * not fail keeps answering throughout.
 */
class RestartGapTest {

  /** Far above the probe's ~20–60 ms, far below spymemcached's one second. */
  static final long MOST_MILLIS = 600;

  static long millisUntilCounting(MemcachedCounterStore store, CounterUpdate u, long since)
      throws InterruptedException {
    while (true) {
      try {
        store.increment(List.of(u));
        return (System.nanoTime() - since) / 1_000_000;
      } catch (RuntimeException e) {
        assertTrue(
            System.nanoTime() - since < Duration.ofSeconds(10).toNanos(),
            "the store counts again within 10 s");
        Thread.sleep(1);
      }
    }
  }

  @Test
  void anIdleStoreCountsAgainWithinTensOfMillisecondsOfARestart() throws Exception {
    try (MemcachedServer server = MemcachedServer.start();
        MemcachedCounterStore store =
            MemcachedCounterStore.builder()
                .servers(server.address())
                .operationTimeout(Duration.ofMillis(200))
                .build()) {
      CounterUpdate u = new CounterUpdate("gap", "k", 60_000, 1, 1);
      store.increment(List.of(u));
      for (int round = 0; round < 3; round++) {
        server.restart();
        long gap = millisUntilCounting(store, u, System.nanoTime());
        System.out.printf("idle restart %d: counting again after %d ms%n", round, gap);
        assertTrue(gap <= MOST_MILLIS, "counting again after " + gap + " ms");
      }
    }
  }

  @Test
  void aNodeThatDidNotFailAnswersThroughTheOthersReconnection() throws Exception {
    try (MemcachedServer healthy = MemcachedServer.start();
        MemcachedServer restarted = MemcachedServer.start();
        MemcachedCounterStore store =
            MemcachedCounterStore.builder()
                .servers(healthy.address() + "," + restarted.address())
                .operationTimeout(Duration.ofMillis(200))
                .build()) {
      CounterUpdate onHealthy = on(store, healthy, "a");
      CounterUpdate onRestarted = on(store, restarted, "b");
      store.increment(List.of(onHealthy));
      store.increment(List.of(onRestarted));
      restarted.restart();
      long since = System.nanoTime();
      long count = 1;
      while (true) {
        assertEquals(
            ++count, store.increment(List.of(onHealthy)).current(0), "the healthy node counts");
        try {
          store.increment(List.of(onRestarted));
          break;
        } catch (RuntimeException e) {
          assertTrue(System.nanoTime() - since < Duration.ofSeconds(10).toNanos());
          Thread.sleep(1);
        }
      }
      long gap = (System.nanoTime() - since) / 1_000_000;
      System.out.printf("two nodes, one restarted: counting again after %d ms%n", gap);
      assertTrue(gap <= MOST_MILLIS, "counting again after " + gap + " ms");
      assertEquals(
          ++count, store.increment(List.of(onHealthy)).current(0), "no count lost on the swap");
    }
  }

  /** A counter whose key lives on {@code server}. */
  private static CounterUpdate on(MemcachedCounterStore store, MemcachedServer server, String tag) {
    SocketAddress node = server.socketAddress();
    for (int i = 0; ; i++) {
      CounterUpdate u = new CounterUpdate("gap-" + tag, "k" + i, 60_000, 1, 1);
      if (store
          .client()
          .getNodeLocator()
          .getPrimary(store.keyOf(u))
          .getSocketAddress()
          .equals(node)) {
        return u;
      }
    }
  }
}
