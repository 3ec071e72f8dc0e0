package dev.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
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

  private static final String RULES =
      """
      defaults: { key: [header:X-Api-Key], onStoreFailure: local, instances: auto }
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
    fleet =
        new ProxiedFleet(
            dir,
            RULES,
            INSTANCES,
            // Three instances, memcached and the test share two cores: a stall of 50 ms (the
            // default) is no store failure.
            "--store-timeout",
            "250");
    fleet.awaitLimit(Integer.toString(LIMIT));
  }

  @AfterEach
  void stop() throws Exception {
    if (fleet != null) {
      fleet.close();
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
    fleet.proxy.refuse();
    sleepUntil(cut + AROUND);
    fleet.proxy.restore();
    for (Path log : fleet.logs) {
      assertTrue(
          Files.readString(log).contains("fleet heartbeat failed"),
          "the instance's beat of the cut window did not fail: " + log);
    }
    fleet.awaitLimit(Integer.toString(LIMIT));
    // The first beat after the store answered again, then the partition.
    long after = nextBeatAfter(System.currentTimeMillis());
    sleepUntil(after + AROUND);
    fleet.proxy.refuse();

    String key = "cut-" + UUID.randomUUID();
    int admitted = 0;
    List<String> limits = new ArrayList<>();
    for (int i = 0; i < 4 * LIMIT; i++) {
      HttpResponse<String> r = fleet.get(i % INSTANCES, key);
      assertTrue(r.statusCode() == 200 || r.statusCode() == 429, "status " + r.statusCode());
      admitted += r.statusCode() == 200 ? 1 : 0;
      if (i < INSTANCES) {
        limits.add(ReportClient.limit(r));
      }
    }
    fleet.assumeOneHour();
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
