package dev.sluice.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.StoreStatus;
import dev.sluice.spi.CounterUpdate;
import dev.sluice.spi.Counts;
import dev.sluice.spi.FakeClock;
import dev.sluice.testkit.RedisServer;
import dev.sluice.testkit.TcpProxy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A cold instance is counted from its first request. Each test fails without one of the store's
 * cold-start mechanisms:
 *
 * <ul>
 *   <li>until Redis has answered a store once, a decision waits up to the connect timeout instead
 *       of the operation timeout: a Redis behind a proxy that holds each reply 100 ms each way,
 *       past the 50 ms operation timeout, counts the first decision (blocking and asynchronous) and
 *       fails the next over;
 *   <li>a cold decision refused unsent is sent again within that wait: a store built before its
 *       Redis listens counts the decision made while it connects (blocking and asynchronous), and a
 *       store whose connection drops before its first decision counts the decision Lettuce refuses
 *       ("not connected") while the connection reopens;
 *   <li>building a store on a Cluster opens a connection to every master: with the store warm, the
 *       first decision on each other master, whose connections take 800 ms to open, is counted
 *       within a 200 ms operation timeout.
 * </ul>
 */
class RedisColdStartTest {

  private static final long W = System.currentTimeMillis() / 60_000;

  private static List<CounterUpdate> one(String identity) {
    return List.of(new CounterUpdate("r", identity, 60_000, W, 1));
  }

  private static RedisCounterStore.Builder store(String address) {
    return RedisCounterStore.builder()
        .uri(address)
        .operationTimeout(Duration.ofMillis(50))
        .connectTimeout(Duration.ofSeconds(10));
  }

  /**
   * A limiter of 5 a minute on {@code store} whose first decision, made now, is asserted counted (4
   * remaining).
   */
  private static RateLimiter limiterWhoseFirstDecisionIsCounted(RedisCounterStore store) {
    RateLimiter limiter =
        RateLimiter.fixedWindow(store)
            .clock(new FakeClock())
            .tier(5, Duration.ofMinutes(1))
            .build();
    Decision first = limiter.tryAcquire("client");
    assertEquals(StoreStatus.OK, first.storeStatus(), "the first decision was not counted");
    assertEquals(4, first.remaining());
    return limiter;
  }

  @Test
  void aColdStoresFirstDecisionWaitsPastTheOperationTimeoutAndIsCounted() throws Exception {
    try (RedisServer redis = RedisServer.start();
        TcpProxy proxy = TcpProxy.to(redis.port());
        RedisCounterStore store = store(proxy.address()).build()) {
      proxy.delay(100);
      RateLimiter limiter = limiterWhoseFirstDecisionIsCounted(store);
      Decision warm = limiter.tryAcquire("client");
      assertEquals(
          StoreStatus.FAILED_OPEN, warm.storeStatus(), "a warm store waits the operation timeout");
    }
  }

  @Test
  void aColdStoresFirstAsynchronousDecisionWaitsPastTheOperationTimeoutAndIsCounted()
      throws Exception {
    try (RedisServer redis = RedisServer.start();
        TcpProxy proxy = TcpProxy.to(redis.port());
        RedisCounterStore store = store(proxy.address()).build()) {
      proxy.delay(100);
      assertEquals(Counts.of(1, 0), store.incrementAsync(one("k")).get(10, TimeUnit.SECONDS));
      ExecutionException warm =
          assertThrows(
              ExecutionException.class,
              () -> store.incrementAsync(one("k")).get(10, TimeUnit.SECONDS),
              "a warm store waits the operation timeout");
      assertTrue(warm.getCause() instanceof StoreUnavailableException, warm.toString());
    }
  }

  /**
   * A single-thread scheduler held by a task that waits for {@code gate}: the store's connection
   * retries wait until the test lets them run.
   */
  private static ScheduledExecutorService heldUntil(CountDownLatch gate) {
    ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    scheduler.execute(
        () -> {
          try {
            gate.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
    return scheduler;
  }

  /**
   * A store built on a free port before any Redis listens there: its build's attempt is refused,
   * and its retry waits on a single-thread scheduler until {@link #letRetriesRun}.
   */
  private static final class StoreBeforeRedis implements AutoCloseable {
    final int port = RedisServer.freePort();
    private final CountDownLatch gate = new CountDownLatch(1);
    private final ScheduledExecutorService scheduler = heldUntil(gate);
    final RedisCounterStore store;

    StoreBeforeRedis() {
      try {
        store = store("127.0.0.1:" + port).storeClock(false).scheduler(scheduler).build();
      } catch (RuntimeException e) {
        letRetriesRun();
        scheduler.shutdownNow();
        throw e;
      }
    }

    void letRetriesRun() {
      gate.countDown();
    }

    @Override
    public void close() {
      try {
        store.close();
      } finally {
        letRetriesRun();
        scheduler.shutdownNow();
      }
    }
  }

  @Test
  void aDecisionMadeBeforeTheConnectionOpensIsSentOnceItOpens() throws Exception {
    try (StoreBeforeRedis cold = new StoreBeforeRedis()) {
      CompletableFuture<Counts> first = cold.store.incrementAsync(one("k"));
      assertFalse(first.isDone(), "a cold decision refused unsent was not sent again");
      try (RedisServer redis = RedisServer.startOn(cold.port)) {
        cold.letRetriesRun();
        assertEquals(Counts.of(1, 0), first.get(10, TimeUnit.SECONDS));
        assertEquals(Counts.of(2, 0), cold.store.increment(one("k")));
      }
    }
  }

  @Test
  void aBlockingDecisionMadeBeforeTheConnectionOpensIsCountedOnceItOpens() throws Exception {
    try (StoreBeforeRedis cold = new StoreBeforeRedis()) {
      // Redis starts and the connection opens while the decision below is already waiting.
      CompletableFuture<RedisServer> started =
          CompletableFuture.supplyAsync(
              () -> {
                RedisServer redis = RedisServer.startOn(cold.port);
                cold.letRetriesRun();
                return redis;
              });
      try {
        limiterWhoseFirstDecisionIsCounted(cold.store);
      } finally {
        started.get(10, TimeUnit.SECONDS).close();
      }
    }
  }

  @Test
  void aDecisionLettuceRefusesWhileTheConnectionReopensIsSentOnceItIsOpen() throws Exception {
    try (RedisServer redis = RedisServer.start();
        TcpProxy proxy = TcpProxy.to(redis.port());
        RedisCounterStore store = store(proxy.address()).storeClock(false).build()) {
      // Before the store's first decision its connection drops, and the one Lettuce opens again
      // takes 500 ms to open: until then Lettuce refuses commands unsent ("not connected").
      proxy.holdNewConnections(500);
      int opened = proxy.accepted();
      proxy.dropConnections();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (proxy.accepted() == opened) {
        assertTrue(System.nanoTime() < deadline, "lettuce did not reconnect");
        Thread.sleep(1); // polling for the reconnection, a condition with a deadline
      }
      assertEquals(Counts.of(1, 0), store.increment(one("k")));
    }
  }

  /**
   * Three masters, no replicas, each announcing the port of a {@link TcpProxy} in front of it, so
   * clients reach the masters only through the proxies.
   */
  private static final class ProxiedCluster implements AutoCloseable {
    final List<RedisServer> masters = new java.util.ArrayList<>();
    final List<TcpProxy> proxies = new java.util.ArrayList<>();
    final List<Integer> busPorts = new java.util.ArrayList<>();

    static ProxiedCluster start() throws Exception {
      ProxiedCluster c = new ProxiedCluster();
      try {
        for (int i = 0; i < 3; i++) {
          c.startMaster(1);
        }
        String[][] ranges = {{"0", "5460"}, {"5461", "10922"}, {"10923", "16383"}};
        for (int i = 0; i < 3; i++) {
          c.masters.get(i).cli("CLUSTER", "ADDSLOTSRANGE", ranges[i][0], ranges[i][1]);
        }
        for (int i = 1; i < 3; i++) {
          c.masters
              .get(0)
              .cli(
                  "CLUSTER",
                  "MEET",
                  "127.0.0.1",
                  Integer.toString(c.masters.get(i).port()),
                  Integer.toString(c.busPorts.get(i)));
        }
        c.awaitOk();
        return c;
      } catch (Exception | Error e) {
        c.close();
        throw e;
      }
    }

    /**
     * Starts a master behind a new proxy, on ports chosen free; again on others when one was taken
     * before the master bound it (the proxy's own port, or a connection's), up to five times.
     */
    private void startMaster(int attempt) {
      int port = RedisServer.freePort();
      int bus = RedisServer.freePort();
      TcpProxy proxy = TcpProxy.to(port);
      RedisServer master;
      try {
        master =
            RedisServer.clusterNodeOn(
                port,
                "--cluster-port",
                Integer.toString(bus),
                "--cluster-announce-port",
                Integer.toString(proxy.port()));
      } catch (IllegalStateException e) {
        proxy.close();
        if (attempt == 5 || !String.valueOf(e.getMessage()).contains("Address already in use")) {
          throw e;
        }
        startMaster(attempt + 1);
        return;
      }
      proxies.add(proxy);
      busPorts.add(bus);
      masters.add(master);
    }

    /** Until every master says the cluster is ok and knows every master by its proxy's port. */
    private void awaitOk() throws InterruptedException {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      for (RedisServer m : masters) {
        while (!m.cli("CLUSTER", "INFO").contains("cluster_state:ok")
            || !proxies.stream()
                .allMatch(p -> m.cli("CLUSTER", "NODES").contains(p.address() + "@"))) {
          assertTrue(System.nanoTime() < deadline, "cluster not ok: " + m.cli("CLUSTER", "NODES"));
          Thread.sleep(50); // polling a starting cluster
        }
      }
    }

    @Override
    public void close() throws Exception {
      for (RedisServer m : masters) {
        m.close();
      }
      for (TcpProxy p : proxies) {
        p.close();
      }
    }
  }

  @Test
  void aWarmStoresFirstDecisionOnEachClusterMasterFindsItsConnectionOpen() throws Exception {
    try (ProxiedCluster cluster = ProxiedCluster.start()) {
      // Connections to the second and third masters take 800 ms to open, the first's none.
      cluster.proxies.get(1).holdNewConnections(800);
      cluster.proxies.get(2).holdNewConnections(800);
      try (RedisCounterStore store =
          RedisCounterStore.builder()
              .cluster(cluster.proxies.get(0).address())
              .operationTimeout(Duration.ofMillis(200))
              .connectTimeout(Duration.ofSeconds(10))
              .storeClock(false)
              .build()) {
        List<CounterUpdate> oneClientPerMaster = new java.util.ArrayList<>();
        for (TcpProxy master : cluster.proxies) {
          for (int i = 0;
              oneClientPerMaster.size() < cluster.proxies.indexOf(master) + 1 && i < 100_000;
              i++) {
            CounterUpdate u = one("client-" + i).get(0);
            if (store
                .connection
                .nodeOf(store.connection.slotOf(store.keyOf(u)))
                .equals(master.address())) {
              oneClientPerMaster.add(u);
            }
          }
        }
        // The first decision, on the first master, answers at once and makes the store warm: each
        // of the next waits only the operation timeout, on a master not called yet.
        for (int m = 0; m < 3; m++) {
          assertEquals(
              Counts.of(1, 0),
              store.increment(List.of(oneClientPerMaster.get(m))),
              "the first decision on master " + m);
        }
      }
    }
  }
}
