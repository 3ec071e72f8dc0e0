package dev.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.jaxrs.SluiceFeature;
import dev.sluice.spi.CounterUpdate;
import dev.sluice.spi.FakeClock;
import dev.sluice.store.memcached.MemcachedCounterStore;
import dev.sluice.testkit.MemcachedServer;
import dev.sluice.yaml.YamlRules;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** A fleet of instances sharing memcached: limits hold for the fleet, not per instance. */
class FleetIT {

  private static MemcachedServer memcached;
  private static final AtomicInteger PREFIX = new AtomicInteger();

  @BeforeAll
  static void start() {
    memcached = MemcachedServer.start();
  }

  @AfterAll
  static void stop() {
    if (memcached != null) {
      memcached.close();
    }
  }

  private static MemcachedCounterStore store(String servers, String prefix) {
    return MemcachedCounterStore.builder()
        .servers(servers)
        .prefix(prefix)
        .operationTimeout(Duration.ofSeconds(2))
        .build();
  }

  /**
   * Sends {@code total} requests for one tenant from 8 threads, spread over the apps; counts 200s.
   */
  private static int fleetAllowed(List<App> apps, int total) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(8);
    AtomicInteger next = new AtomicInteger();
    AtomicInteger allowed = new AtomicInteger();
    AtomicInteger other = new AtomicInteger();
    try {
      List<Future<?>> work = new ArrayList<>();
      for (int t = 0; t < 8; t++) {
        work.add(
            pool.submit(
                () -> {
                  for (int i; (i = next.getAndIncrement()) < total; ) {
                    int status =
                        apps.get(i % apps.size())
                            .get("/api/v1/report", "X-Tenant", "acme")
                            .statusCode();
                    if (status == 200) {
                      allowed.incrementAndGet();
                    } else if (status != 429) {
                      other.incrementAndGet();
                    }
                  }
                  return null;
                }));
      }
      for (Future<?> f : work) {
        f.get(60, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertEquals(0, other.get(), "only 200s and 429s");
    return allowed.get();
  }

  private static List<App> fleet(
      String rules, FakeClock clock, String prefix, List<MemcachedCounterStore> stores) {
    List<App> apps = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      MemcachedCounterStore s = store(memcached.address(), prefix);
      stores.add(s);
      apps.add(
          new App(
              SluiceFeature.builder(s)
                  .clock(clock)
                  .rules(YamlRules.parse(rules, "fleet"))
                  .build()));
    }
    return apps;
  }

  private static void close(List<App> apps, List<MemcachedCounterStore> stores) {
    apps.forEach(App::close);
    stores.forEach(MemcachedCounterStore::close);
  }

  @Test
  void aFixedWindowAllowsExactlyTheLimitAcrossThreeInstances() throws Exception {
    FakeClock clock = new FakeClock(System.currentTimeMillis() / 3_600_000 * 3_600_000 + 60_000);
    List<MemcachedCounterStore> stores = new ArrayList<>();
    List<App> apps =
        fleet(
            """
        rules:
          - { id: tenant, match: { prefix: /api }, key: [header:X-Tenant], algorithm: fixed-window,
              tiers: [ { limit: 50, period: 1h } ] }
        """,
            clock,
            "fleet" + PREFIX.incrementAndGet(),
            stores);
    try {
      int allowed = fleetAllowed(apps, 300);
      Report.line(
          "fleet, fixed window, 3 instances, 8 client threads, 300 requests, limit 50: allowed "
              + allowed);
      assertEquals(50, allowed);
    } finally {
      close(apps, stores);
    }
  }

  @Test
  void aSlidingWindowNeverAllowsMoreThanTheEstimateAcrossThreeInstances() throws Exception {
    long minute = 60_000;
    long windowStart = System.currentTimeMillis() / minute * minute;
    FakeClock clock = new FakeClock(windowStart + 30_000);
    String prefix = "fleet" + PREFIX.incrementAndGet();
    try (MemcachedCounterStore seed = store(memcached.address(), prefix)) {
      // 40 in the previous minute; half of it still counts at 30 s: 50 − 20 = 30 may pass.
      seed.increment(
          List.of(
              new CounterUpdate(
                  "tenant", "header:X-Tenant=acme", minute, windowStart / minute - 1, 40)));
    }
    List<MemcachedCounterStore> stores = new ArrayList<>();
    List<App> apps =
        fleet(
            """
        rules:
          - { id: tenant, match: { prefix: /api }, key: [header:X-Tenant], algorithm: sliding-window,
              tiers: [ { limit: 50, period: 1m } ] }
        """,
            clock,
            prefix,
            stores);
    try {
      int allowed = fleetAllowed(apps, 300);
      Report.line(
          "fleet, sliding window, 3 instances, 8 client threads, 300 requests, limit 50, previous 40 at f=0.5 "
              + "(estimate allows 30): allowed "
              + allowed);
      assertEquals(30, allowed);
    } finally {
      close(apps, stores);
    }
  }

  @Test
  void killingOneOfThreeNodesFailsOpenOnlyItsKeysAndARestartRestoresLimiting() throws Exception {
    try (MemcachedServer b = MemcachedServer.start();
        MemcachedServer c = MemcachedServer.start()) {
      String servers = memcached.address() + "," + b.address() + "," + c.address();
      FakeClock clock = new FakeClock(System.currentTimeMillis() / 3_600_000 * 3_600_000 + 60_000);
      try (MemcachedCounterStore s =
          MemcachedCounterStore.builder()
              .servers(servers)
              .prefix("ring" + PREFIX.incrementAndGet())
              .operationTimeout(Duration.ofMillis(100))
              .build()) {
        RateLimiter limiter =
            RateLimiter.fixedWindow(s)
                .clock(clock)
                .tier(1, Duration.ofHours(1))
                .denyCacheSize(0)
                .build();
        int clients = 300;
        long onC = c.stat("curr_items");
        for (int i = 0; i < clients; i++) {
          assertTrue(limiter.tryAcquire("client-" + i).allowed());
        }
        onC = c.stat("curr_items") - onC;
        c.kill();
        int failedOpen = 0;
        int limited = 0;
        for (int i = 0; i < clients; i++) {
          Decision d = limiter.tryAcquire("client-" + i);
          if (d.storeFailed()) {
            assertTrue(d.allowed());
            failedOpen++;
          } else {
            assertTrue(!d.allowed(), "still limited: client-" + i);
            limited++;
          }
        }
        Report.line(
            "consistent hashing, 3 nodes, 300 clients at their limit, one node killed: "
                + failedOpen
                + " failed open (the killed node held "
                + onC
                + " counters), "
                + limited
                + " still limited");
        assertEquals(onC, failedOpen, "exactly the killed node's keys fail open");
        assertEquals(clients - onC, limited);

        c.restart();
        long restarted = System.nanoTime();
        assertTrue(
            MemcachedServer.await(
                Duration.ofSeconds(10),
                () -> {
                  int failing = 0;
                  for (int i = 0; i < clients; i++) {
                    failing += limiter.tryAcquire("probe-" + i).storeFailed() ? 1 : 0;
                  }
                  return failing == 0;
                }),
            "every node answers again");
        Report.line(
            "consistent hashing: the restarted node answered again after "
                + (System.nanoTime() - restarted) / 1_000_000
                + " ms");
      }
    }
  }

  @Test
  void addingAFourthNodeMovesAboutAQuarterOfTheKeys() {
    try (MemcachedServer b = MemcachedServer.start();
        MemcachedServer c = MemcachedServer.start();
        MemcachedServer d = MemcachedServer.start()) {
      String three = memcached.address() + "," + b.address() + "," + c.address();
      String prefix = "reshard" + PREFIX.incrementAndGet();
      long w = System.currentTimeMillis() / 3_600_000;
      int keys = 2_000;
      try (MemcachedCounterStore s3 = store(three, prefix)) {
        for (int i = 0; i < keys; i++) {
          s3.increment(List.of(new CounterUpdate("r", "client-" + i, 3_600_000, w, 1)));
        }
      }
      long before = d.stat("curr_items");
      try (MemcachedCounterStore s4 = store(three + "," + d.address(), prefix)) {
        for (int i = 0; i < keys; i++) {
          s4.increment(List.of(new CounterUpdate("r", "client-" + i, 3_600_000, w, 1)));
        }
      }
      long moved = d.stat("curr_items") - before;
      double share = moved / (double) keys;
      Report.line(
          String.format(
              Locale.ROOT,
              "consistent hashing: a fourth node took %d of %d counters (%.1f %%)",
              moved,
              keys,
              100 * share));
      assertTrue(share > 0.15 && share < 0.35, "moved " + share);
    }
  }
}
