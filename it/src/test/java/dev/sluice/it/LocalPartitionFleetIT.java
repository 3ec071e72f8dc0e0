package dev.sluice.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
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

  private static final String RULES =
      """
      defaults: { key: [header:X-Api-Key], onStoreFailure: local, instances: 3 }
      rules:
        - id: reports
          match: { methods: [GET], prefix: /api/v1/report }
          algorithm: fixed-window
          tiers: [ { limit: 30, period: 1h } ]
      """;

  private ProxiedFleet fleet;

  @TempDir Path dir;

  @BeforeEach
  void start() throws Exception {
    fleet = new ProxiedFleet(dir, RULES, INSTANCES);
    fleet.awaitLimit(Integer.toString(LIMIT));
  }

  @AfterEach
  void stop() throws Exception {
    if (fleet != null) {
      fleet.close();
    }
  }

  /** Sends {@code n} requests for {@code key}, round robin over the fleet; returns the admitted. */
  private int roundRobin(String key, int n) {
    int admitted = 0;
    for (int i = 0; i < n; i++) {
      HttpResponse<String> r = fleet.get(i % INSTANCES, key);
      assertTrue(r.statusCode() == 200 || r.statusCode() == 429, "status " + r.statusCode());
      admitted += r.statusCode() == 200 ? 1 : 0;
    }
    return admitted;
  }

  @Test
  void aPartitionMidWindowGoesOnFromTheStoresCountAndPushesItBack() throws Exception {
    String key = "partition-" + UUID.randomUUID();
    int admitted = roundRobin(key, 24);
    fleet.proxy.refuse();
    fleet.awaitLimit(Integer.toString(SHARE));
    int local = roundRobin(key, 30);
    fleet.proxy.restore();
    fleet.awaitLimit(Integer.toString(LIMIT));
    int after = roundRobin(key, 30);
    fleet.assumeOneHour();
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
                  fleet.proxy.refuse();
                  Thread.sleep(100); // the injected outage
                  fleet.proxy.restore();
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
      fleet.proxy.restore();
    }
    fleet.assumeOneHour();
    System.out.printf(
        "flapping: %d admitted of %d sent in one window of %d over %d flaps (bound %d)%n",
        admitted, sent, LIMIT, flaps[0], BOUND);
    assertTrue(flaps[0] >= 20, "flapped " + flaps[0]);
    assertTrue(admitted >= LIMIT - INSTANCES, "admitted " + admitted);
    assertTrue(admitted <= BOUND, "admitted " + admitted + " in a window of " + LIMIT);
  }
}
