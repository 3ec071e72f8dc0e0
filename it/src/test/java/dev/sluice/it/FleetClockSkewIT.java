package dev.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.sluice.testkit.Memcached;
import dev.sluice.testkit.MemcachedServer;
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
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A fleet whose hosts' clocks disagree, as a fleet runs: each instance is the demo in its own JVM
 * under libfaketime (Debian's {@code faketime} package, {@code FAKETIME=+30s}), on one real
 * memcached, over HTTP. Each decides on memcached's clock, as it measured it, so the fleet shares
 * every window: three hosts 0, 30 and 60 s apart admit a fixed or sliding window's limit of 20
 * once, not three times (60 and 57 when each host's clock was its own), and a token bucket on two
 * hosts 30 s apart refuses nothing sent at half its rate (50 of 100 before).
 */
@Memcached
class FleetClockSkewIT {

  private static final String RULES =
      """
      rules:
        - id: fixed
          match: { methods: [GET], path: /api/v1/report }
          key: [header:X-Client]
          algorithm: fixed-window
          tiers: [ { limit: 20, period: 30s } ]
        - id: sliding
          match: { methods: [GET], path: /api/v1/search }
          key: [header:X-Client]
          algorithm: sliding-window
          tiers: [ { limit: 20, period: 30s } ]
        - id: bucket
          match: { methods: [POST], path: "/api/v1/lead/{id}" }
          key: [header:X-Client]
          algorithm: token-bucket
          tiers: [ { limit: 10, period: 1s, burst: 10 } ]
      """;

  private static final HttpClient HTTP =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  private static MemcachedServer memcached;
  private static Path dir;
  private static final List<DemoProcess> FLEET = new ArrayList<>();

  @BeforeAll
  static void start(MemcachedServer started) throws Exception {
    assumeTrue(
        DemoProcess.LIBFAKETIME != null, "libfaketime is not installed (apt-get install faketime)");
    memcached = started;
    dir = Files.createTempDirectory("sluice-skew");
    Path rules = dir.resolve("rules.yaml");
    Files.writeString(rules, RULES);
    for (String skew : List.of("+0s", "+30s", "+60s")) {
      FLEET.add(
          DemoProcess.startAt(
              dir.resolve("demo" + skew + ".log"),
              skew,
              "--rules",
              rules.toString(),
              "--memcached",
              memcached.address()));
    }
    // Each instance says once it has measured memcached's clock (a condition with a deadline).
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    for (String skew : List.of("+0s", "+30s", "+60s")) {
      Path log = dir.resolve("demo" + skew + ".log");
      while (!Files.readString(log).contains("memcached's")) {
        if (System.nanoTime() > deadline) {
          throw new AssertionError("the demo at " + skew + " never measured memcached's clock");
        }
        Thread.sleep(50);
      }
    }
    warmUp();
  }

  /**
   * Warms each instance up until the store answers its decisions (its responses carry rate-limit
   * headers): a cold instance's first calls may time out and fail open, which this test is not
   * about.
   */
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
  }

  /**
   * Waits until memcached's clock is 2 to 15 s into a 30 s window: the test's span stays in one.
   */
  private static void awayFromAWindowEdge() throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(40);
    while (System.nanoTime() < deadline) {
      long into = Long.parseLong(memcached.stats().get("time")) % 30;
      if (into >= 2 && into <= 15) {
        return;
      }
      Thread.sleep(200);
    }
    throw new AssertionError("memcached's clock did not move");
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

  /** 30 requests to each of the three instances, in turn, for a new client: how many passed. */
  private static int admittedOfNinety(String path) throws Exception {
    awayFromAWindowEdge();
    String client = UUID.randomUUID().toString();
    int admitted = 0;
    for (int i = 0; i < 90; i++) {
      if (send(FLEET.get(i % 3), "GET", path, client) == 200) {
        admitted++;
      }
    }
    Report.line(
        String.format(
            Locale.ROOT,
            "clock skew 0 / +30 / +60 s, separate JVMs, %s, limit 20 per 30 s: %d of 90 admitted",
            path,
            admitted));
    return admitted;
  }

  @Test
  void threeHostsAMinuteApartAdmitAFixedWindowsLimitOnce() throws Exception {
    assertEquals(20, admittedOfNinety("/api/v1/report"));
  }

  @Test
  void threeHostsAMinuteApartAdmitASlidingWindowsLimitOnce() throws Exception {
    assertEquals(20, admittedOfNinety("/api/v1/search"));
  }

  /**
   * 40 requests at 5 a second, half its rate, alternating between hosts 30 s apart: a token bucket
   * refuses none of them (each host's arrival times on its own clock refused half).
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
      if (send(FLEET.get(i % 2), "POST", "/api/v1/lead/" + i, client) != 200) {
        refused++;
      }
    }
    Report.line(
        "clock skew 0 / +30 s, separate JVMs, token bucket 10/s, 40 requests at 5/s: "
            + refused
            + " refused");
    assertEquals(0, refused);
  }
}
