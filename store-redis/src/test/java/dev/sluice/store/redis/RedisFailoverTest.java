package dev.sluice.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.spi.CounterUpdate;
import dev.sluice.spi.Counts;
import dev.sluice.testkit.RedisCluster;
import dev.sluice.testkit.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A Sentinel group and a Cluster, started for real: the store counts through a master's failure and
 * its replica's promotion without being rebuilt, and on a Cluster a decision whose counters fall in
 * several hash slots is one script per slot, sent together.
 */
class RedisFailoverTest {

  private static final long W = System.currentTimeMillis() / 1_000;

  /** Milliseconds until {@code updates} are counted, trying every 5 ms, at most {@code max}. */
  private static long untilCounted(
      RedisCounterStore store, List<CounterUpdate> updates, Duration max) {
    long t0 = System.nanoTime();
    long deadline = t0 + max.toNanos();
    RuntimeException last = null;
    while (System.nanoTime() < deadline) {
      try {
        store.increment(updates);
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      } catch (RuntimeException e) {
        last = e;
        try {
          Thread.sleep(5); // a condition wait with a deadline
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException(ie);
        }
      }
    }
    throw new AssertionError("not counted within " + max, last);
  }

  /** Waits until {@code replica} says it is a master: the failover is done. */
  private static long untilMaster(RedisServer replica, Duration max) throws InterruptedException {
    long t0 = System.nanoTime();
    while (!replica.cli("ROLE").startsWith("master")) {
      assertTrue(System.nanoTime() - t0 < max.toNanos(), "no failover within " + max);
      Thread.sleep(20);
    }
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
  }

  @Test
  void aSentinelFailoverIsFollowedWithoutARestart() throws Exception {
    try (RedisServer master = RedisServer.start();
        RedisServer replica = RedisServer.replicaOf(master);
        RedisServer sentinel = RedisServer.sentinel("sluice", master)) {
      // The sentinel has found the replica (it fails over to no one before).
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      while (!sentinel.cli("SENTINEL", "REPLICAS", "sluice").contains(replica.port() + "")) {
        assertTrue(System.nanoTime() < deadline, "the sentinel never saw the replica");
        Thread.sleep(50);
      }
      List<CounterUpdate> one = List.of(new CounterUpdate("r", "k", 60_000, W / 60, 1));
      try (RedisCounterStore store =
          RedisCounterStore.builder()
              .uri("redis-sentinel://" + sentinel.address() + "#sluice")
              .operationTimeout(Duration.ofMillis(200))
              .build()) {
        assertEquals(Counts.of(1, 0), store.increment(one));
        // Replication is asynchronous: give the replica a moment to have the count.
        master.cli("WAIT", "1", "1000");
        master.kill();
        long t0 = System.nanoTime();
        long promoted = untilMaster(replica, Duration.ofSeconds(30));
        long counted = untilCounted(store, one, Duration.ofSeconds(10));
        long total = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        System.out.printf(
            "sentinel failover: replica promoted %d ms after the master died; counted on it %d ms"
                + " later (%d ms in all)%n",
            promoted, counted, total);
        // The replica had the count (or, written just before the failure, lost it): the count
        // goes on from there, never twice.
        Counts r = store.increment(one);
        assertTrue(r.current(0) == 3 || r.current(0) == 2, "count " + r.current(0));
      }
    }
  }

  @Test
  void aClusterDecisionIsOneScriptPerSlot() throws Exception {
    try (RedisCluster cluster = RedisCluster.start(3);
        RedisCounterStore store =
            RedisCounterStore.builder()
                .cluster(cluster.seeds())
                .operationTimeout(Duration.ofMillis(500))
                .build()) {
      // A new cluster may still be opening its connection to a master: warm up on other keys.
      List<CounterUpdate> warm = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        warm.add(new CounterUpdate("warm", "client-" + i, 1_000, W, 1));
      }
      untilCounted(store, warm, Duration.ofSeconds(10));
      // Ten clients: their counters spread over the three masters; each client's in one slot.
      List<CounterUpdate> decision = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        decision.add(new CounterUpdate("per-key", "client-" + i, 60_000, W / 60, 1));
        decision.add(new CounterUpdate("per-key", "client-" + i, 1_000, W, 1));
        decision.add(new CounterUpdate("bucket", "client-" + i, 1_000, W, 10, 1_000));
      }
      Counts first = store.increment(decision);
      for (int i = 0; i < decision.size(); i++) {
        long expect = decision.get(i).running() ? 1_010 : 1;
        assertEquals(expect, first.current(i), "counter " + i);
      }
      long before = scripts(cluster);
      store.increment(decision);
      assertEquals(10, scripts(cluster) - before, "one script per client's slot, ten in all");
    }
  }

  /**
   * A master killed: its replica is elected after the 1 s node timeout, the store reads the
   * topology again on the failures meanwhile and counts on the new master, without a restart. The
   * fixture's replicas have synced before the test starts: a replica that never synced is never
   * elected, which left the cluster down for good.
   */
  @Test
  void aClusterMasterThatDiesIsReplacedByItsReplica() throws Exception {
    try (RedisCluster cluster = RedisCluster.start(3);
        RedisCounterStore store =
            RedisCounterStore.builder()
                .cluster(cluster.seeds())
                .operationTimeout(Duration.ofMillis(500))
                .build()) {
      List<CounterUpdate> decision = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        decision.add(new CounterUpdate("per-key", "client-" + i, 60_000, W / 60, 1));
      }
      store.increment(decision);
      store.increment(decision);
      String key = store.keyOf(decision.get(0));
      RedisServer master = cluster.masterOf(key);
      master.kill();
      long counted = untilCounted(store, decision, Duration.ofSeconds(30));
      System.out.printf(
          "cluster failover: counting on every slot again %d ms after a master died%n", counted);
      Counts after = store.increment(decision);
      // Replication is asynchronous: a count written just before the failure may be lost, never
      // counted twice.
      assertTrue(after.current(0) >= 3 && after.current(0) <= 4, "count " + after.current(0));
    }
  }

  private static long scripts(RedisCluster cluster) {
    long n = 0;
    for (RedisServer s : cluster.nodes()) {
      try {
        n += RedisCounterStoreTest.scriptsRun(s);
      } catch (RuntimeException e) {
        // a node that was killed
      }
    }
    return n;
  }
}
