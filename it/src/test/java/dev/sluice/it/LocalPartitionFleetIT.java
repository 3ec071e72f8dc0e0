package dev.sluice.it;

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
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code onStoreFailure: local} on three demo JVMs behind a proxy to a memcached that keeps
 * running: partitioned mid-window, they go on from memcached's count at their share and push what
 * they admitted when it is back; under a flapping partition, the window of 30 holds its bound,
 * {@code 3 × 10} plus what an instance could not know: the admissions after its last answer, and
 * the others' pushes not yet made (about one request per instance each), 36 in all.
 */
class LocalPartitionFleetIT {

  private static final int INSTANCES = 3;
  private static final int LIMIT = 30;
  private static final int SHARE = LIMIT / INSTANCES;

  /** The shares, plus one request per instance unseen and one per instance not yet pushed. */
  private static final int BOUND = INSTANCES * SHARE + 2 * INSTANCES;

  /** How far memcached's clock may be taken to be from this host's, with room to spare. */
  private static final long CLOCK_SLACK = 10_000;

  private static final String RULES =
      """
      defaults: { key: [header:X-Api-Key], onStoreFailure: local, instances: 3 }
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
      fleet.add(
          DemoProcess.start(
              dir.resolve("demo-" + i + ".log"),
              "--memcached",
              "127.0.0.1:" + proxy.port(),
              "--rules",
              rules.toString()));
    }
    awaitDecisions(Integer.toString(LIMIT));
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

  /**
   * Waits until every instance describes fresh keys with {@code limit}: 30 by memcached, 10 local.
   */
  private void awaitDecisions(String limit) {
    for (DemoProcess d : fleet) {
      assertTrue(
          MemcachedServer.await(
              Duration.ofSeconds(30),
              () ->
                  get(d, "probe-" + UUID.randomUUID())
                      .headers()
                      .firstValue("X-RateLimit-Limit")
                      .orElse("none")
                      .equals(limit)),
          "instance on port " + d.port + " never decided with limit " + limit);
    }
  }

  /** Sends {@code n} requests for {@code key}, round robin over the fleet; returns the admitted. */
  private int roundRobin(String key, int n) {
    int admitted = 0;
    for (int i = 0; i < n; i++) {
      HttpResponse<String> r = get(fleet.get(i % INSTANCES), key);
      assertTrue(r.statusCode() == 200 || r.statusCode() == 429, "status " + r.statusCode());
      admitted += r.statusCode() == 200 ? 1 : 0;
    }
    return admitted;
  }

  /**
   * Skips a run that may have crossed an hour's boundary. The instances count hours on memcached's
   * clock, a second or two from this host's, so the test's span is widened by {@link #CLOCK_SLACK}
   * on each side.
   */
  private void assumeOneWindow() {
    long h = Duration.ofHours(1).toMillis();
    Assumptions.assumeTrue(
        (began - CLOCK_SLACK) / h == (System.currentTimeMillis() + CLOCK_SLACK) / h,
        "the test may have crossed an hour's boundary on memcached's clock");
  }

  @Test
  void aPartitionMidWindowGoesOnFromTheStoresCountAndPushesItBack() throws Exception {
    String key = "partition-" + UUID.randomUUID();
    int admitted = roundRobin(key, 24);
    proxy.refuse();
    awaitDecisions(Integer.toString(SHARE));
    int local = roundRobin(key, 30);
    proxy.restore();
    awaitDecisions(Integer.toString(LIMIT));
    int after = roundRobin(key, 30);
    assumeOneWindow();
    int total = admitted + local + after;
    System.out.printf(
        "partition: %d by memcached, %d locally, %d after; %d in the window (bound %d)%n",
        admitted, local, after, total, BOUND);
    assertTrue(admitted == 24, "before the partition: " + admitted);
    assertTrue(local <= 6 + INSTANCES, "each instance from 24 at a third, 8 of 10: " + local);
    assertTrue(total <= BOUND, "the window: " + total);
    assertTrue(after <= INSTANCES, "restored, memcached holds the local ones: " + after);
  }

  @Test
  void aFlappingPartitionHoldsTheWindowsBound() throws Exception {
    String key = "flap-" + UUID.randomUUID();
    AtomicBoolean done = new AtomicBoolean();
    int[] flaps = new int[1];
    Thread flapper =
        new Thread(
            () -> {
              try {
                while (!done.get()) {
                  proxy.refuse();
                  Thread.sleep(100); // the injected outage
                  proxy.restore();
                  Thread.sleep(100); // and the store back
                  flaps[0]++;
                }
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            },
            "flapper");
    flapper.start();
    int admitted = 0;
    int sent = 0;
    long end = System.nanoTime() + Duration.ofSeconds(8).toNanos();
    try {
      while (System.nanoTime() < end) {
        admitted += roundRobin(key, INSTANCES);
        sent += INSTANCES;
      }
    } finally {
      done.set(true);
      flapper.join();
      proxy.restore();
    }
    assumeOneWindow();
    System.out.printf(
        "flapping: %d admitted of %d sent in one window of %d over %d flaps (bound %d)%n",
        admitted, sent, LIMIT, flaps[0], BOUND);
    assertTrue(flaps[0] >= 20, "flapped " + flaps[0]);
    assertTrue(admitted >= LIMIT - INSTANCES, "admitted " + admitted);
    assertTrue(admitted <= BOUND, "admitted " + admitted + " in a window of " + LIMIT);
  }
}
