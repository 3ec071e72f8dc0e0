package dev.sluice.store.redis;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.spi.CounterUpdate;
import dev.sluice.testkit.RedisCluster;
import dev.sluice.testkit.RedisServer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A cold instance is counted from its first request: a store just built on a just-started server or
 * cluster counts its very first decision, with no warm-up, at the default operation timeout.
 */
class RedisColdStartTest {

  private static final long W = System.currentTimeMillis() / 1_000;

  /** Ten clients: their counters fall on every master of a three-master cluster. */
  private static List<CounterUpdate> tenClients(String rule) {
    List<CounterUpdate> decision = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      decision.add(new CounterUpdate(rule, "client-" + i, 60_000, W / 60, 1));
    }
    return decision;
  }

  @Test
  void aColdClusterCountsTheFirstDecisionOnEveryMaster() {
    try (RedisCluster cluster = RedisCluster.start(3)) {
      // Each store is a cold instance: three in a row, each on its first decision.
      for (int instance = 1; instance <= 3; instance++) {
        try (RedisCounterStore store =
            RedisCounterStore.builder().cluster(cluster.seeds()).build()) {
          long[] counts = store.increment(tenClients("per-key"));
          for (int i = 0; i < 10; i++) {
            assertEquals(instance, counts[2 * i], "instance " + instance + ", client " + i);
          }
        }
      }
    }
  }

  @Test
  void aColdServerCountsTheFirstDecision() {
    try (RedisServer server = RedisServer.start()) {
      for (int instance = 1; instance <= 3; instance++) {
        try (RedisCounterStore store = RedisCounterStore.builder().uri(server.uri()).build()) {
          assertArrayEquals(
              new long[] {instance, 0},
              store.increment(List.of(new CounterUpdate("r", "k", 60_000, W / 60, 1))));
        }
      }
    }
  }
}
