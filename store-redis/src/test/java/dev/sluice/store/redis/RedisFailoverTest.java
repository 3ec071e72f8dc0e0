package dev.sluice.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.spi.CounterUpdate;
import dev.sluice.spi.Counts;
import dev.sluice.testkit.RedisCluster;
import dev.sluice.testkit.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
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
      RedisCounterStore store, List<CounterUpdate> updates, Duration max, long pauseMillis) {
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
          Thread.sleep(pauseMillis); // a condition wait with a deadline
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException(ie);
        }
      }
    }
    throw new AssertionError("not counted within " + max, last);
  }

  /** The {@link System#nanoTime} of the first counted decision, trying every millisecond. */
  private static long countedAt(
      RedisCounterStore store, List<CounterUpdate> updates, Duration max) {
    untilCounted(store, updates, max, 1);
    return System.nanoTime();
  }

  /** Waits until {@code replica} has applied everything {@code master} has written so far. */
  private static void untilReplicated(RedisServer master, RedisServer replica)
      throws InterruptedException {
    assertTrue(
        master.replicationInfo("master_repl_offset") > 0, "no replication offset on the master");
    replica.awaitReplicated(master);
  }

  @Test
  void aSentinelFailoverIsFollowedWithoutARestart() throws Exception {
    try (RedisServer master = RedisServer.start();
        RedisServer replica = RedisServer.replicaOf(master);
        RedisServer sentinel = RedisServer.sentinel("sluice", master)) {
      // The sentinel has found the replica (it fails over to no one before).
      sentinel.awaitSeesReplica("sluice", replica);
      List<CounterUpdate> one = List.of(new CounterUpdate("r", "k", 60_000, W / 60, 1));
      try (RedisCounterStore store =
          RedisCounterStore.builder()
              .uri("redis-sentinel://" + sentinel.address() + "#sluice")
              .operationTimeout(Duration.ofMillis(200))
              .build()) {
        assertEquals(Counts.of(1, 0), store.increment(one));
        // Replication is asynchronous: the replica has the count before its master is stopped.
        untilReplicated(master, replica);
        AtomicLong switched = new AtomicLong();
        RedisClient watcher = RedisClient.create("redis://" + sentinel.address());
        try (StatefulRedisPubSubConnection<String, String> events = watcher.connectPubSub()) {
          events.addListener(
              new RedisPubSubAdapter<>() {
                @Override
                public void message(String channel, String message) {
                  switched.compareAndSet(0, System.nanoTime());
                }
              });
          events.sync().subscribe("+switch-master");
          master.kill();
          long t0 = System.nanoTime();
          long counted = countedAt(store, one, Duration.ofSeconds(30));
          long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
          while (switched.get() == 0 && System.nanoTime() < until) {
            Thread.sleep(5); // the event may arrive after the count
          }
          assertTrue(switched.get() != 0, "no +switch-master seen");
          System.out.printf(
              "sentinel failover: +switch-master %d ms after the master died; first decision"
                  + " counted on the new master %d ms after +switch-master%n",
              TimeUnit.NANOSECONDS.toMillis(switched.get() - t0),
              TimeUnit.NANOSECONDS.toMillis(counted - switched.get()));
          // Tens of ms here; a bound that holds on a loaded machine.
          assertTrue(counted - switched.get() < TimeUnit.SECONDS.toNanos(2), "slow to follow");
        } finally {
          watcher.shutdown(Duration.ZERO, Duration.ofSeconds(1));
        }
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

      // An empty identity (a throttle's shared pace) counts like any other: an empty hash tag
      // would hash each window's whole key, and its two windows would be in different slots.
      CounterUpdate empty = new CounterUpdate("throttle:x", "", 1_000, W + 1, 1);
      assertEquals(1, store.increment(List.of(empty)).current(0));
      assertEquals(2, store.increment(List.of(empty)).current(0));
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
      RedisServer replica = replicaOf(cluster, master);
      // Replication is asynchronous: the replica has both counts before its master dies, or a
      // loaded machine can lose them, and the count below starts lower than the test can tell.
      untilReplicated(master, replica);
      master.kill();
      long t0 = System.nanoTime();
      AtomicLong promoted = new AtomicLong();
      Thread watch =
          new Thread(
              () -> {
                try {
                  replica.millisUntilMaster(Duration.ofSeconds(30));
                  promoted.set(System.nanoTime());
                } catch (InterruptedException | AssertionError e) {
                  // the assertion below reports it
                }
              });
      watch.start();
      // An attempt that failed while the master was down may still be counted on the new master
      // (a timeout that lands late; Lettuce re-sends what a closed node's connection held): each
      // is at most one more count, allowed below.
      long failed = 0;
      long counted = 0;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (counted == 0) {
        assertTrue(System.nanoTime() < deadline, "not counted within 30 s");
        try {
          store.increment(decision);
          counted = System.nanoTime();
        } catch (RuntimeException e) {
          failed++;
          Thread.sleep(1); // a condition wait with a deadline
        }
      }
      watch.join(30_000);
      assertTrue(promoted.get() != 0, "the replica was not promoted");
      System.out.printf(
          "cluster failover: replica promoted %d ms after its master died; every slot counted"
              + " again %d ms after the promotion%n",
          TimeUnit.NANOSECONDS.toMillis(promoted.get() - t0),
          TimeUnit.NANOSECONDS.toMillis(counted - promoted.get()));
      assertTrue(counted - promoted.get() < TimeUnit.SECONDS.toNanos(2), "slow to follow");
      // The cluster's connections may still be settling: a decision may fail once more, and
      // whatever part of it was sent may have counted.
      Counts after = null;
      long failedAfter = 0;
      while (after == null) {
        assertTrue(System.nanoTime() < deadline, "not counted again within 30 s");
        try {
          after = store.increment(decision);
        } catch (RuntimeException e) {
          failedAfter++;
          Thread.sleep(1); // a condition wait with a deadline
        }
      }
      // Every answered decision is counted once: the two before (replicated), the first after and
      // this one; an attempt that failed may have been counted too.
      assertTrue(
          after.current(0) >= 4 && after.current(0) <= 4 + failed + failedAfter,
          "count "
              + after.current(0)
              + " with "
              + failed
              + " attempts failed during the failover and "
              + failedAfter
              + " failed after");
    }
  }

  /** The node replicating {@code master}. */
  private static RedisServer replicaOf(RedisCluster cluster, RedisServer master) {
    for (RedisServer n : cluster.nodes()) {
      if (n.cli("INFO", "replication").contains("master_port:" + master.port())) {
        return n;
      }
    }
    throw new IllegalStateException("no replica of " + master.address());
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
