package dev.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.testkit.MemcachedServer;
import dev.sluice.testkit.TcpProxy;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code instances: auto} with {@code onStoreFailure: local} on three demo JVMs behind a proxy to
 * memcached: the store is cut off for 3 s around one heartbeat (every instance's beat of that
 * window fails), comes back for the next beat, and is then cut off for good. Partitioned, each
 * instance still counts the fleet as 3 and admits its share, 10 of the limit of 30, so the fleet
 * admits at most the stated bound, {@code 3 × 10} plus one request per instance unseen and one not
 * yet pushed: 36. (Before, the instances counted 1, 2 and 3 and admitted 30 + 15 + 10.)
 */
class AutoInstancesCutIT {

  private static final int INSTANCES = 3;
  private static final int LIMIT = 30;
  private static final int SHARE = LIMIT / INSTANCES;

  /** The shares, plus one request per instance unseen and one per instance not yet pushed. */
  private static final int BOUND = INSTANCES * SHARE + 2 * INSTANCES;

  /** The heartbeat's window; every instance beats halfway through it, on memcached's clock. */
  private static final long BEAT = 5_000;

  /**
   * How far before and after the halfway point the store is cut off: memcached's clock, which the
   * instances beat on, is within a second of this host's.
   */
  private static final long AROUND = 1_500;

  /** How far memcached's clock may be taken to be from this host's, with room to spare. */
  private static final long CLOCK_SLACK = 10_000;

  private static final String RULES =
      """
      defaults: { key: [header:X-Api-Key], onStoreFailure: local, instances: auto }
      rules:
        - id: reports
          match: { methods: [GET], prefix: /api/v1/report }
          algorithm: fixed-window
          tiers: [ { limit: 30, period: 1h } ]
      """;

  private final HttpClient http =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private MemcachedServer memcached;
  private TcpProxy proxy;
  private final List<DemoProcess> fleet = new ArrayList<>();
  private final List<Path> logs = new ArrayList<>();

  /** When the test began, on this host's clock. */
  private long began;

  @TempDir Path dir;

  @BeforeEach
  void start() throws Exception {
    began = System.currentTimeMillis();
    memcached = MemcachedServer.start();
    proxy = TcpProxy.to(memcached.port());
    Path rules = dir.resolve("rules.yaml");
    Files.writeString(rules, RULES);
    for (int i = 0; i < INSTANCES; i++) {
      Path log = dir.resolve("demo-" + i + ".log");
      logs.add(log);
      fleet.add(
          DemoProcess.start(
              log,
              "--memcached",
              "127.0.0.1:" + proxy.port(),
              "--rules",
              rules.toString(),
              // Three instances, memcached and the test share two cores: a stall of 50 ms (the
              // default) is no store failure.
              "--store-timeout",
              "250"));
    }
    awaitStoreDecisions();
  }

  @AfterEach
  void stop() throws Exception {
    for (DemoProcess d : fleet) {
      d.close();
    }
    if (proxy != null) {
      proxy.close();
    }
    if (memcached != null) {
      memcached.close();
    }
  }

  private HttpResponse<String> get(DemoProcess d, String key) {
    try {
      return http.send(
          HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + d.port + "/api/v1/report"))
              .header("X-Api-Key", key)
              .timeout(Duration.ofSeconds(30))
              .build(),
          HttpResponse.BodyHandlers.ofString());
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** Waits until memcached decides for every instance: fresh keys get its limit, 30. */
  private void awaitStoreDecisions() {
    for (DemoProcess d : fleet) {
      assertTrue(
          MemcachedServer.await(
              Duration.ofSeconds(30),
              () ->
                  get(d, "probe-" + UUID.randomUUID())
                      .headers()
                      .firstValue("X-RateLimit-Limit")
                      .orElse("none")
                      .equals(Integer.toString(LIMIT))),
          "instance on port " + d.port + " never decided on memcached");
    }
  }

  /** Sleeps until {@code at} on this host's clock. */
  private static void sleepUntil(long at) throws InterruptedException {
    long left = at - System.currentTimeMillis();
    if (left > 0) {
      Thread.sleep(left);
    }
  }

  /** {@return the halfway point of the first window whose beats all come after {@code t}} */
  private static long nextBeatAfter(long t) {
    long beat = Math.floorDiv(t, BEAT) * BEAT + BEAT / 2;
    while (beat - AROUND <= t) {
      beat += BEAT;
    }
    return beat;
  }

  @Test
  void aStoreCutAroundOneHeartbeatLeavesEachInstanceItsShareWhenPartitioned() throws Exception {
    // Two beats of the whole fleet, then the store cut off around the third.
    long beat = nextBeatAfter(nextBeatAfter(System.currentTimeMillis()) + AROUND);
    long cut = nextBeatAfter(beat + AROUND);
    sleepUntil(cut - AROUND);
    proxy.refuse();
    sleepUntil(cut + AROUND);
    proxy.restore();
    for (Path log : logs) {
      assertTrue(
          Files.readString(log).contains("fleet heartbeat failed"),
          "the instance's beat of the cut window did not fail: " + log);
    }
    awaitStoreDecisions();
    // The first beat after the store answered again, then the partition.
    long after = nextBeatAfter(System.currentTimeMillis());
    sleepUntil(after + AROUND);
    proxy.refuse();

    String key = "cut-" + UUID.randomUUID();
    int admitted = 0;
    List<String> limits = new ArrayList<>();
    for (int i = 0; i < 4 * LIMIT; i++) {
      DemoProcess d = fleet.get(i % INSTANCES);
      HttpResponse<String> r = get(d, key);
      assertTrue(r.statusCode() == 200 || r.statusCode() == 429, "status " + r.statusCode());
      admitted += r.statusCode() == 200 ? 1 : 0;
      if (i < INSTANCES) {
        limits.add(r.headers().firstValue("X-RateLimit-Limit").orElse("none"));
      }
    }
    long h = Duration.ofHours(1).toMillis();
    Assumptions.assumeTrue(
        (began - CLOCK_SLACK) / h == (System.currentTimeMillis() + CLOCK_SLACK) / h,
        "the test may have crossed an hour's boundary on memcached's clock");
    System.out.printf(
        "auto after a missed beat: partitioned limits %s, %d admitted of %d (bound %d)%n",
        limits, admitted, LIMIT, BOUND);
    assertEquals(
        List.of("10", "10", "10"), limits, "each instance's share: the fleet counted as 3");
    assertTrue(
        admitted <= BOUND, "admitted " + admitted + " of " + LIMIT + " (bound " + BOUND + ")");
    assertTrue(admitted >= LIMIT - INSTANCES, "admitted " + admitted);
  }
}
