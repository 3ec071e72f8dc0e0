package dev.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.sluice.testkit.RedisServer;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A fleet on one real redis-server whose hosts' clocks disagree: three instances of the demo, each
 * in its own JVM under libfaketime ({@code FAKETIME=+0s / +30s / +60s}), over HTTP. Each decides on
 * Redis's clock ({@code TIME}, measured at start), so the fleet shares every window and every token
 * bucket's arrival times: the limits hold exactly, with no clock-skew term, whether the requests
 * come one at a time or from many threads at once. On two shared cores a decision may still miss
 * its 50 ms deadline; the exactness rules fail closed ({@code onStoreFailure: reject}, a 503), so
 * such a request is never admitted uncounted, and it is reported beside the figure.
 */
class RedisFleetIT {

  private static final String RULES =
      """
      rules:
        - id: fixed
          match: { methods: [GET], path: /api/v1/report }
          key: [header:X-Client]
          algorithm: fixed-window
          onStoreFailure: reject
          tiers: [ { limit: 20, period: 30s } ]
        - id: sliding
          match: { methods: [GET], path: /api/v1/search }
          key: [header:X-Client]
          algorithm: sliding-window
          onStoreFailure: reject
          tiers: [ { limit: 20, period: 30s } ]
        - id: bucket
          match: { methods: [POST], path: "/api/v1/lead/{id}" }
          key: [header:X-Client]
          algorithm: token-bucket
          onStoreFailure: reject
          tiers: [ { limit: 10, period: 1s, burst: 10 } ]
        - id: paced
          match: { methods: [GET], path: /api/v1/slow }
          key: [header:X-Client]
          algorithm: token-bucket
          tiers: [ { limit: 10, period: 1s, burst: 10 } ]
      """;

  private static final List<String> SKEWS = List.of("+0s", "+30s", "+60s");

  private static final HttpClient HTTP =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  private static RedisServer redis;
  private static Path dir;
  private static final List<DemoProcess> FLEET = new ArrayList<>();

  @BeforeAll
  static void start() throws Exception {
    assumeTrue(
        DemoProcess.LIBFAKETIME != null, "libfaketime is not installed (apt-get install faketime)");
    redis = RedisServer.start();
    dir = Files.createTempDirectory("sluice-redis-fleet");
    Path rules = dir.resolve("rules.yaml");
    Files.writeString(rules, RULES);
    for (String skew : SKEWS) {
      FLEET.add(
          DemoProcess.startAt(
              dir.resolve("demo" + skew + ".log"),
              skew,
              "--rules",
              rules.toString(),
              "--redis",
              redis.uri()));
    }
    for (String skew : SKEWS) {
      String log = Files.readString(dir.resolve("demo" + skew + ".log"));
      assertTrue(log.contains("redis's clock"), "measured when built, at " + skew + ":\n" + log);
    }
    warmUp();
  }

  /** Until the store answers each instance's decisions (its responses carry rate-limit headers). */
  private static void warmUp() throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    for (DemoProcess d : FLEET) {
      int answered = 0;
      while (answered < 5) {
        if (System.nanoTime() > deadline) {
          throw new AssertionError("the store never answered the demo on port " + d.port);
        }
        HttpResponse<Void> r =
            HTTP.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + d.port + "/api/v1/report"))
                    .header("X-Client", "warm-up-" + UUID.randomUUID())
                    .build(),
                HttpResponse.BodyHandlers.discarding());
        answered = r.headers().firstValue("X-RateLimit-Remaining").isPresent() ? answered + 1 : 0;
      }
    }
  }

  @AfterAll
  static void stop() throws Exception {
    for (DemoProcess d : FLEET) {
      d.close();
    }
    FLEET.clear();
    if (redis != null) {
      redis.close();
    }
  }

  /** Waits until Redis's clock is 2 to 15 s into a 30 s window: the test's span stays in one. */
  private static void awayFromAWindowEdge() throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(40);
    while (System.nanoTime() < deadline) {
      long into = Long.parseLong(redis.cli("TIME").lines().findFirst().orElseThrow()) % 30;
      if (into >= 2 && into <= 15) {
        return;
      }
      Thread.sleep(200);
    }
    throw new AssertionError("redis's clock did not move");
  }

  private static int send(DemoProcess d, String method, String path, String client)
      throws IOException, InterruptedException {
    HttpRequest r =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + d.port + path))
            .header("X-Client", client)
            .method(method, HttpRequest.BodyPublishers.noBody())
            .build();
    return HTTP.send(r, HttpResponse.BodyHandlers.discarding()).statusCode();
  }

  /**
   * {@code perInstance} requests to each instance for a new client, from four threads per instance
   * at once: how many passed.
   */
  private static int[] admittedAtOnce(String method, String path, int perInstance)
      throws Exception {
    String client = UUID.randomUUID().toString();
    ExecutorService pool = Executors.newFixedThreadPool(4 * FLEET.size());
    try {
      List<Future<int[]>> done = new ArrayList<>();
      for (DemoProcess d : FLEET) {
        for (int t = 0; t < 4; t++) {
          done.add(
              pool.submit(
                  () -> {
                    int[] seen = new int[2];
                    for (int i = 0; i < perInstance / 4; i++) {
                      int code =
                          send(
                              d, method, path.replace("{i}", UUID.randomUUID().toString()), client);
                      if (code == 200) {
                        seen[0]++;
                      } else if (code == 503) {
                        seen[1]++;
                      }
                    }
                    return seen;
                  }));
        }
      }
      int[] total = new int[2];
      for (Future<int[]> f : done) {
        int[] seen = f.get(60, TimeUnit.SECONDS);
        total[0] += seen[0];
        total[1] += seen[1];
      }
      return total;
    } finally {
      pool.shutdownNow();
    }
  }

  private static void report(String what, int[] seen, int sent) {
    Report.line(
        String.format(
            Locale.ROOT,
            "redis, clock skew 0 / +30 / +60 s, separate JVMs, %s: %d of %d admitted (%d store"
                + " timeouts refused)",
            what,
            seen[0],
            sent,
            seen[1]));
  }

  /** Exactly {@code limit}, but for requests refused because the store did not answer in time. */
  private static void assertExactly(int limit, int[] seen) {
    assertTrue(seen[0] <= limit, seen[0] + " admitted");
    assertTrue(seen[0] >= limit - seen[1], seen[0] + " admitted, " + seen[1] + " timeouts");
  }

  @Test
  void aFixedWindowsLimitIsAdmittedOnceAcrossHostsAMinuteApart() throws Exception {
    awayFromAWindowEdge();
    int[] seen = admittedAtOnce("GET", "/api/v1/report", 40);
    report("fixed window 20 per 30 s, 12 threads", seen, 120);
    assertExactly(20, seen);
  }

  @Test
  void aSlidingWindowsLimitIsAdmittedOnceAcrossHostsAMinuteApart() throws Exception {
    awayFromAWindowEdge();
    int[] seen = admittedAtOnce("GET", "/api/v1/search", 40);
    report("sliding window 20 per 30 s, 12 threads", seen, 120);
    assertExactly(20, seen);
  }

  /**
   * A burst at three hosts a minute apart: the bucket admits its burst and what it refilled during
   * the burst, no more (each host's arrival times on its own clock would admit a burst per host).
   */
  @Test
  void aTokenBucketsBurstIsAdmittedOnceAcrossHostsAMinuteApart() throws Exception {
    long t0 = System.nanoTime();
    int[] seen = admittedAtOnce("POST", "/api/v1/lead/{i}", 40);
    double seconds = (System.nanoTime() - t0) / 1e9;
    report(
        String.format(Locale.ROOT, "token bucket 10/s burst 10, 12 threads over %.2f s", seconds),
        seen,
        120);
    assertTrue(seen[0] >= 10 - seen[1], seen[0] + " admitted");
    assertTrue(seen[0] <= 10 + (int) Math.ceil(10 * seconds), seen[0] + " admitted");
  }

  /**
   * 40 requests at 5 a second, half the bucket's rate, alternating between hosts 30 s apart: none
   * is refused.
   */
  @Test
  void aTokenBucketOnHostsApartRefusesNothingSentUnderItsRate() throws Exception {
    String client = UUID.randomUUID().toString();
    int refused = 0;
    long start = System.nanoTime();
    for (int i = 0; i < 40; i++) {
      long due = start + i * 200_000_000L;
      long wait = due - System.nanoTime();
      if (wait > 0) {
        TimeUnit.NANOSECONDS.sleep(wait); // pacing the client, not waiting for a window
      }
      if (send(FLEET.get(i % 2), "GET", "/api/v1/slow?ms=0", client) != 200) {
        refused++;
      }
    }
    report("token bucket 10/s, 40 requests at 5/s", new int[] {40 - refused, 0}, 40);
    assertEquals(0, refused);
  }
}
