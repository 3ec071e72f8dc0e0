package dev.sluice.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.spi.CounterUpdate;
import dev.sluice.testkit.MemcachedServer;
import dev.sluice.testkit.RedisServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A Redis at its {@code maxmemory} evicts counters; the store reads each master's {@code INFO},
 * reports the evictions per master, logs their start once, and says at start what Redis does when
 * it is full.
 */
class RedisEvictionTest {

  private static final long MINUTE = 60_000;

  /** Counts one window of {@code n} identities from {@code from} on, 100 a round trip. */
  private static void flood(RedisCounterStore store, int from, int n, long window) {
    List<CounterUpdate> batch = new ArrayList<>();
    for (int i = from; i < from + n; i++) {
      batch.add(new CounterUpdate("per-key", "client-" + i, MINUTE, window, 1));
      if (batch.size() == 100) {
        store.increment(batch);
        batch.clear();
      }
    }
    if (!batch.isEmpty()) {
      store.increment(batch);
    }
  }

  private static RedisCounterStore store(RedisServer server) {
    return RedisCounterStore.builder()
        .uri(server.uri())
        .operationTimeout(Duration.ofSeconds(2))
        .statsInterval(Duration.ofMillis(100))
        .build();
  }

  private static long evictedKeys(RedisServer server) {
    return Long.parseLong(EvictionWatch.fields(server.cli("info", "stats")).get("evicted_keys"));
  }

  private static int lines(ByteArrayOutputStream captured, String text) {
    return captured.toString(StandardCharsets.UTF_8).split(text, -1).length - 1;
  }

  @Test
  void evictionsAreCountedPerMasterAndTheirStartIsLoggedOnce() {
    PrintStream err = System.err;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    long window = System.currentTimeMillis() / MINUTE;
    System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
    try (RedisServer server =
            RedisServer.start("--maxmemory", "3mb", "--maxmemory-policy", "allkeys-lru");
        RedisCounterStore store = store(server)) {
      String node = server.address();
      assertEquals(Map.of(node, 0L), store.evictions(), "the master is listed from the start");
      assertTrue(
          MemcachedServer.await(
              Duration.ofSeconds(5), () -> lines(captured, "evicts keys when full") == 1),
          "the policy is said at start:\n" + captured);
      for (int round = 0; round < 6; round++) {
        flood(store, round * 10_000, 10_000, window);
      }
      long redisSays = evictedKeys(server);
      assertTrue(redisSays > 10_000, "redis evicted " + redisSays);
      assertTrue(
          MemcachedServer.await(
              Duration.ofSeconds(5), () -> store.evictions().get(node) == redisSays),
          "the store saw every eviction: " + store.evictions() + " of " + redisSays);
      assertEquals(1, lines(captured, "is evicting"), "logged once while it evicts:\n" + captured);
      assertEquals(1, lines(captured, "evicts keys when full"), "the policy is said once");
      System.out.printf(
          "redis maxmemory 3mb, allkeys-lru: %,d counters written, %,d evicted (redis says %,d)%n",
          60_000, store.evictions().get(node), redisSays);
    } finally {
      System.setErr(err);
    }
    String log = captured.toString(StandardCharsets.UTF_8);
    assertTrue(log.contains("starts again from zero"), log);
    assertTrue(log.contains("allkeys-lru"), log);
  }

  @Test
  void aCounterRefundedToZeroTakesNoMemory() throws Exception {
    // A refused request's counters are counted, then given back: a counter of an identity Redis
    // did not hold goes with its refund, so a flood of refused new identities leaves nothing.
    long window = System.currentTimeMillis() / MINUTE;
    try (RedisServer server = RedisServer.start();
        RedisCounterStore store = store(server)) {
      List<CounterUpdate> kept = List.of(new CounterUpdate("per-key", "kept", MINUTE, window, 2));
      store.increment(kept);
      for (int i = 0; i < 500; i++) {
        List<CounterUpdate> one =
            List.of(new CounterUpdate("per-key", "minted-" + i, MINUTE, window, 1));
        store.increment(one);
        store.decrementAsync(one).get();
      }
      store.decrementAsync(List.of(new CounterUpdate("per-key", "kept", MINUTE, window, 1))).get();
      assertEquals("1", server.cli("dbsize"), server.cli("--scan"));
      assertEquals(1, store.increment(kept).current(0) - 2, "the kept counter holds its count");
    }
  }

  @Test
  void aRedisThatRefusesWritesWhenFullIsSaidAtStart() {
    PrintStream err = System.err;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
    try (RedisServer server = RedisServer.start("--maxmemory", "64mb");
        RedisCounterStore store = store(server)) {
      assertTrue(
          MemcachedServer.await(
              Duration.ofSeconds(5), () -> lines(captured, "refuses writes when full") == 1),
          captured.toString(StandardCharsets.UTF_8));
      assertEquals(Map.of(server.address(), 0L), store.evictions());
    } finally {
      System.setErr(err);
    }
  }
}
