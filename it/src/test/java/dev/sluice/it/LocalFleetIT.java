package dev.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.example.Demo;
import dev.sluice.testkit.MemcachedServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code onStoreFailure: local} on three demo instances sharing one memcached: killed or stalled,
 * each instance admits exactly its share ({@code limit ÷ 3}) and never a 5xx; a stalled store costs
 * a decision at most the operation timeout; restarted, the limit is the fleet's again.
 */
class LocalFleetIT {

  private static final int INSTANCES = 3;

  /** A bucket of 30 that refills 3 an hour: nothing refills while the test runs. */
  private static final int BURST = 30;

  private static final int SHARE = BURST / INSTANCES;

  /** The demo's memcached operation timeout. */
  private static final long TIMEOUT_MILLIS = 50;

  /** Allowed above the operation timeout for one request on a loaded 2-core machine. */
  private static final long MARGIN_MILLIS = 400;

  private static final String RULES =
      """
      defaults: { key: [header:X-Api-Key], onStoreFailure: local, instances: 3 }
      rules:
        - id: reports
          match: { methods: [GET], prefix: /api/v1/report }
          algorithm: token-bucket
          tiers: [ { limit: 3, period: 1h, burst: 30 } ]
      """;

  private final ReportClient reports = new ReportClient();
  private MemcachedServer memcached;
  private final List<Demo> fleet = new ArrayList<>();

  @TempDir Path dir;

  @BeforeEach
  void start() throws Exception {
    memcached = MemcachedServer.start();
    Path rules = dir.resolve("rules.yaml");
    Files.writeString(rules, RULES);
    for (int i = 0; i < INSTANCES; i++) {
      fleet.add(
          Demo.start(
              new Demo.Options()
                  .host("127.0.0.1")
                  .port(0)
                  .memcached(memcached.address())
                  .rules(rules),
              new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8)));
    }
    for (Demo d : fleet) {
      awaitShared(d);
    }
  }

  @AfterEach
  void stop() {
    fleet.forEach(Demo::close);
    if (memcached != null) {
      memcached.close();
    }
  }

  /** Waits until the instance's decisions are the store's (its headers show the whole burst). */
  private void awaitShared(Demo d) {
    assertTrue(
        MemcachedServer.await(
            Duration.ofSeconds(30),
            () ->
                ReportClient.limit(reports.get(d.port(), "warm-up-" + UUID.randomUUID()))
                    .equals(Integer.toString(BURST))),
        "the instance's decisions never reached memcached");
  }

  /** What one key got from each instance during an outage: statuses, limits, worst latency. */
  private record Outage(List<Map<String, Integer>> perInstance, long worstMillis) {}

  /** Sends {@code perInstance} requests for one key to each instance, one thread per instance. */
  private Outage during(String key, int perInstance) throws Exception {
    List<Map<String, Integer>> seen = new ArrayList<>();
    AtomicLong worst = new AtomicLong();
    ExecutorService pool = Executors.newFixedThreadPool(INSTANCES);
    try {
      List<Future<Map<String, Integer>>> work = new ArrayList<>();
      for (int i = 0; i < INSTANCES; i++) {
        Demo d = fleet.get(i);
        work.add(
            pool.submit(
                () -> {
                  Map<String, Integer> statuses = new TreeMap<>();
                  for (int n = 0; n < perInstance; n++) {
                    long t0 = System.nanoTime();
                    HttpResponse<String> r = reports.get(d.port(), key);
                    worst.accumulateAndGet((System.nanoTime() - t0) / 1_000_000, Math::max);
                    statuses.merge(
                        r.statusCode() + " limit " + ReportClient.limit(r), 1, Integer::sum);
                  }
                  return statuses;
                }));
      }
      for (Future<Map<String, Integer>> f : work) {
        seen.add(f.get(60, TimeUnit.SECONDS));
      }
    } finally {
      pool.shutdownNow();
    }
    return new Outage(seen, worst.get());
  }

  /** Other clients' traffic on every instance from two threads, until closed: never a 5xx. */
  private final class Background implements AutoCloseable {
    final Map<Integer, Integer> statuses = new ConcurrentHashMap<>();
    private final ExecutorService pool = Executors.newFixedThreadPool(2);
    private volatile boolean stop;

    Background() {
      for (int t = 0; t < 2; t++) {
        Future<?> unused =
            pool.submit(
                () -> {
                  for (int n = 0; !stop; n++) {
                    String key = "bg-" + ThreadLocalRandom.current().nextInt(50);
                    statuses.merge(
                        reports.get(fleet.get(n % INSTANCES).port(), key).statusCode(),
                        1,
                        Integer::sum);
                  }
                  return null;
                });
      }
    }

    @Override
    public void close() throws InterruptedException {
      stop = true;
      pool.shutdown();
      assertTrue(pool.awaitTermination(60, TimeUnit.SECONDS));
      assertTrue(statuses.keySet().stream().allMatch(s -> s < 500), "no 5xx: " + statuses);
      assertTrue(statuses.getOrDefault(200, 0) > 0, "the load ran: " + statuses);
    }
  }

  private static void assertShare(String scenario, Outage o, int perInstance) {
    Report.line(
        String.format(
            Locale.ROOT,
            "local on store failure, %s: %d instances, %d requests each for one key (burst %d,"
                + " share %d): %s; worst request %d ms",
            scenario,
            INSTANCES,
            perInstance,
            BURST,
            SHARE,
            o.perInstance(),
            o.worstMillis()));
    for (int i = 0; i < INSTANCES; i++) {
      Map<String, Integer> seen = o.perInstance().get(i);
      assertEquals(
          Map.of("200 limit " + SHARE, SHARE, "429 limit " + SHARE, perInstance - SHARE),
          seen,
          "instance " + i + " admits its share, no more, no less, and never a 5xx");
    }
  }

  /** Restarted (or resumed), every instance counts in memcached again: one limit for the fleet. */
  private void assertSharedAgain() {
    for (Demo d : fleet) {
      awaitShared(d);
    }
    String key = "after-" + UUID.randomUUID();
    int storeAdmitted = 0;
    int local = 0;
    for (int n = 0; n < BURST + 9; n++) {
      HttpResponse<String> r = reports.get(fleet.get(n % INSTANCES).port(), key);
      if (ReportClient.limit(r).equals(Integer.toString(BURST))) {
        storeAdmitted += r.statusCode() == 200 ? 1 : 0;
      } else {
        local++;
      }
    }
    Report.line(
        "local on store failure, after recovery: a fresh key admitted "
            + storeAdmitted
            + " of "
            + (BURST + 9)
            + " by the store across the fleet (burst "
            + BURST
            + "), "
            + local
            + " decided locally");
    // A decision that timed out on the way back is decided locally, and its increment may land.
    assertTrue(
        storeAdmitted <= BURST && storeAdmitted >= BURST - local,
        "the fleet's limit, not three shares: " + storeAdmitted);
  }

  /**
   * Under background load, {@code fault} hits memcached; each instance then gets {@code SHARE + 5}
   * requests for one key before {@code heal}; each must admit exactly its share.
   */
  private Outage outage(String scenario, Runnable fault, Runnable heal) throws Exception {
    int perInstance = SHARE + 5;
    Outage o;
    try (Background load = new Background()) {
      assertTrue(
          MemcachedServer.await(
              Duration.ofSeconds(30), () -> load.statuses.getOrDefault(200, 0) >= 20),
          "the load runs before the fault");
      fault.run();
      try {
        o = during("outage-" + UUID.randomUUID(), perInstance);
      } finally {
        heal.run();
      }
    }
    assertShare(scenario, o, perInstance);
    return o;
  }

  @Test
  void killedUnderLoadEachInstanceAdmitsItsShareAndRestartedTheLimitIsSharedAgain()
      throws Exception {
    outage("memcached killed (SIGKILL) under load", memcached::kill, memcached::restart);
    assertSharedAgain();
  }

  @Test
  void stalledUnderLoadEachDecisionWaitsAtMostTheTimeoutAndAdmitsTheShare() throws Exception {
    Outage o =
        outage("memcached stalled (SIGSTOP) under load", memcached::stall, memcached::resume);
    assertTrue(
        o.worstMillis() <= TIMEOUT_MILLIS + MARGIN_MILLIS,
        "a request waited " + o.worstMillis() + " ms; timeout " + TIMEOUT_MILLIS + " ms");
    assertSharedAgain();
  }
}
