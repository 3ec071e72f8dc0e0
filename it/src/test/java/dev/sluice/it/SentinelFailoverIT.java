package dev.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.testkit.RedisServer;
import dev.sluice.testkit.TcpProxy;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code onStoreFailure: local} on one demo instance, in its own JVM over HTTP, whose Redis fails
 * over under a real Sentinel and loses writes it had acknowledged. Each round starts a master, a
 * replica that replicates through a proxy, a sentinel and the demo. On every rule (fixed, sliding
 * window, token bucket, 100 a day) two clients get 40 admitted through the store (replicated), then
 * the proxy holds everything the master sends the replica, and 30 more the replica never receives.
 * The sentinel promotes the replica, forced ({@code SENTINEL FAILOVER}: the old master is demoted
 * and resynced from the new one) or with the master killed. One client sends all along, with a
 * probe of new clients; the other comes back once the demo counts on the new master, which holds 40
 * of its 70. Neither may get more than the limit in the window: RELIABILITY's bound on one
 * instance.
 */
class SentinelFailoverIT {

  private static final int LIMIT = 100;

  /** Admitted through the store and replicated, then through the store and never replicated. */
  private static final int REPLICATED = 40;

  private static final int LOST = 30;

  /** Decisions the new master answers before the quiet client comes back. */
  private static final long DECIDED_AFTER = 20;

  private static final String MASTER = "sluice";

  /** A day's window: a round (seconds) stays in one, away from midnight UTC. */
  private static final String RULES =
      """
      defaults: { key: [header:X-Client], onStoreFailure: local, instances: 1 }
      rules:
        - id: fixed
          match: { methods: [GET], path: /api/v1/report }
          algorithm: fixed-window
          tiers: [ { limit: 100, period: 1d } ]
        - id: sliding
          match: { methods: [GET], path: /api/v1/search }
          algorithm: sliding-window
          tiers: [ { limit: 100, period: 1d } ]
        - id: bucket
          match: { methods: [POST], path: "/api/v1/lead/{id}" }
          algorithm: token-bucket
          tiers: [ { limit: 100, period: 1d, burst: 100 } ]
      """;

  /** A rule's route: the test sends it requests for one client. */
  private record Route(String rule, String method, String path) {}

  private static final List<Route> ROUTES =
      List.of(
          new Route("fixed window", "GET", "/api/v1/report"),
          new Route("sliding window", "GET", "/api/v1/search"),
          new Route("token bucket", "POST", "/api/v1/lead/x"));

  private static final int FIXED = 0;
  private static final int SLIDING = 1;
  private static final int BUCKET = 2;

  private enum Failover {
    FORCED,
    MASTER_KILLED
  }

  private static final HttpClient HTTP =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(10))
          .build();

  @TempDir Path dir;

  @Test
  void aForcedFailoverThatLosesWritesAdmitsNoMoreThanTheLimit() throws Exception {
    for (int round = 1; round <= 2; round++) {
      round(Failover.FORCED, round);
    }
  }

  @Test
  void aKilledMasterWhoseReplicaMissedWritesAdmitsNoMoreThanTheLimit() throws Exception {
    for (int round = 1; round <= 2; round++) {
      round(Failover.MASTER_KILLED, round);
    }
  }

  private void round(Failover how, int round) throws Exception {
    // A replica syncs at once (the default waits 5 s for more replicas to share one transfer);
    // the sentinel, started once it has, finds it in its first look at the master.
    try (RedisServer master = RedisServer.start("--repl-diskless-sync-delay", "0");
        TcpProxy link = TcpProxy.to(master.port());
        RedisServer replica =
            RedisServer.start(
                "--replicaof",
                "127.0.0.1",
                Integer.toString(link.port()),
                "--repl-diskless-sync-delay",
                "0")) {
      awaitSynced(replica);
      try (RedisServer sentinel = RedisServer.sentinel(MASTER, master)) {
        sentinel.awaitSeesReplica(MASTER, replica);
        round(how, round, master, link, replica, sentinel);
      }
    }
  }

  /** One round on a synced replica the sentinel knows, with the demo started on it. */
  private void round(
      Failover how,
      int round,
      RedisServer master,
      TcpProxy link,
      RedisServer replica,
      RedisServer sentinel)
      throws Exception {
    Path rules = dir.resolve("rules.yaml");
    Files.writeString(rules, RULES);
    Path log = dir.resolve("demo-" + how + "-" + round + ".log");
    try (DemoProcess demo =
        DemoProcess.start(
            log,
            "--rules",
            rules.toString(),
            "--redis",
            "redis-sentinel://" + sentinel.address() + "#" + MASTER)) {
      awaitDecidingOn(master, demo);
      awayFromMidnight(master);
      // Two clients with the same past on every rule: one quiet while the store fails over, one
      // sending all along.
      String quiet = UUID.randomUUID().toString();
      String through = UUID.randomUUID().toString();
      int[] quietAdmitted = new int[ROUTES.size()];
      int[] throughAdmitted = new int[ROUTES.size()];
      for (int r = 0; r < ROUTES.size(); r++) {
        quietAdmitted[r] += admit(demo, ROUTES.get(r), quiet, REPLICATED);
        throughAdmitted[r] += admit(demo, ROUTES.get(r), through, REPLICATED);
      }
      replica.awaitReplicated(master);
      link.delay(TimeUnit.MINUTES.toMillis(10)); // the replica receives nothing more
      for (int r = 0; r < ROUTES.size(); r++) {
        quietAdmitted[r] += admit(demo, ROUTES.get(r), quiet, LOST);
        throughAdmitted[r] += admit(demo, ROUTES.get(r), through, LOST);
      }
      long behind =
          master.replicationInfo("master_repl_offset")
              - replica.replicationInfo("slave_repl_offset");
      assertTrue(behind > 0, "the replica is not behind its master");

      long t0 = System.nanoTime();
      AtomicBoolean stop = new AtomicBoolean();
      ExecutorService pool = Executors.newFixedThreadPool(ROUTES.size() + 1);
      try {
        List<Future<int[]>> traffic = new ArrayList<>();
        for (Route route : ROUTES) {
          traffic.add(pool.submit(() -> until(stop, demo, route, () -> through)));
        }
        // A new client each request: a decision the deny cache cannot answer, so the demo asks
        // the store all along, and the new master's scripts tell when the demo counts there.
        Future<int[]> probe =
            pool.submit(
                () -> until(stop, demo, ROUTES.get(FIXED), () -> UUID.randomUUID().toString()));
        if (how == Failover.FORCED) {
          assertEquals("OK", sentinel.cli("SENTINEL", "FAILOVER", MASTER));
        } else {
          master.kill();
        }
        long promoted = replica.millisUntilMaster(Duration.ofSeconds(30));
        long decided = untilDecided(replica, DECIDED_AFTER, Duration.ofSeconds(40));
        // The quiet client comes back: the new master holds 40 of its 70.
        int[] quietAfter = new int[ROUTES.size()];
        for (int r = 0; r < ROUTES.size(); r++) {
          for (int i = 0; i < LIMIT; i++) {
            int code = send(demo, ROUTES.get(r), quiet);
            assertTrue(code == 200 || code == 429, ROUTES.get(r).rule() + ": " + code);
            quietAfter[r] += code == 200 ? 1 : 0;
          }
          quietAdmitted[r] += quietAfter[r];
        }
        stop.set(true);
        int[] throughAfter = new int[ROUTES.size()];
        int others = 0;
        for (int r = 0; r < ROUTES.size(); r++) {
          int[] seen = traffic.get(r).get(60, TimeUnit.SECONDS);
          throughAfter[r] = seen[0];
          throughAdmitted[r] += seen[0];
          others += seen[2];
        }
        int[] probed = probe.get(60, TimeUnit.SECONDS);
        others += probed[2];
        double seconds = (System.nanoTime() - t0) / 1e9;
        Report.line(
            String.format(
                Locale.ROOT,
                "sentinel failover (%s, round %d), onStoreFailure: local, one instance, limit %d"
                    + " per day, %d admitted of which the replica missed %d: promoted after %d ms,"
                    + " the demo deciding on it %d ms later; admitted after the failover (fixed,"
                    + " sliding, bucket) to a client quiet meanwhile %d, %d, %d, to one sending"
                    + " all along %d, %d, %d (%d probes, %d other answers) in %.1f s",
                how == Failover.FORCED ? "SENTINEL FAILOVER" : "master killed",
                round,
                LIMIT,
                REPLICATED + LOST,
                LOST,
                promoted,
                decided,
                quietAfter[FIXED],
                quietAfter[SLIDING],
                quietAfter[BUCKET],
                throughAfter[FIXED],
                throughAfter[SLIDING],
                throughAfter[BUCKET],
                probed[0] + probed[1],
                others,
                seconds));
        assertEquals(
            0, others, "answers other than 200 and 429; the demo's log:\n" + Files.readString(log));
        // The bucket refills 100 a day: what it refilled during the round is admitted too.
        int refilled = (int) Math.ceil(seconds * LIMIT / TimeUnit.DAYS.toSeconds(1));
        for (int[] admitted : List.of(quietAdmitted, throughAdmitted)) {
          String who = admitted == quietAdmitted ? "the quiet client" : "the client sending";
          assertTrue(
              admitted[FIXED] <= LIMIT,
              "fixed window, " + who + ": " + admitted[FIXED] + " admitted of " + LIMIT);
          assertTrue(
              admitted[SLIDING] <= LIMIT,
              "sliding window, " + who + ": " + admitted[SLIDING] + " admitted of " + LIMIT);
          assertTrue(
              admitted[BUCKET] <= LIMIT + refilled,
              "token bucket, " + who + ": " + admitted[BUCKET] + " admitted of " + LIMIT);
        }
      } finally {
        stop.set(true);
        pool.shutdownNow();
      }
    }
  }

  private static int send(DemoProcess d, Route p, String client)
      throws IOException, InterruptedException {
    HttpRequest r =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + d.port + p.path()))
            .header("X-Client", client)
            .timeout(Duration.ofSeconds(30))
            .method(p.method(), HttpRequest.BodyPublishers.noBody())
            .build();
    return HTTP.send(r, HttpResponse.BodyHandlers.discarding()).statusCode();
  }

  /** Sends {@code n} requests, each admitted: the count. */
  private static int admit(DemoProcess d, Route p, String client, int n)
      throws IOException, InterruptedException {
    for (int i = 0; i < n; i++) {
      assertEquals(200, send(d, p, client), p.rule() + ", request " + (i + 1) + " of " + n);
    }
    return n;
  }

  /** Requests one after another until {@code stop}: admitted, refused, other answers. */
  private static int[] until(AtomicBoolean stop, DemoProcess d, Route p, Supplier<String> client)
      throws IOException, InterruptedException {
    int[] seen = new int[3];
    while (!stop.get()) {
      int code = send(d, p, client.get());
      seen[code == 200 ? 0 : code == 429 ? 1 : 2]++;
    }
    return seen;
  }

  /** Until the demo's decisions run as scripts on {@code master}: it counts through the store. */
  private static void awaitDecidingOn(RedisServer master, DemoProcess demo) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (scriptsRun(master) == 0) {
      assertTrue(System.nanoTime() < deadline, "the demo never decided on the master");
      send(demo, ROUTES.get(FIXED), "warm-up-" + UUID.randomUUID());
      Thread.sleep(20); // a condition wait with a deadline
    }
  }

  /** Waits while Redis's clock is in the last 3 minutes of a UTC day. */
  private static void awayFromMidnight(RedisServer server) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(4);
    while (Long.parseLong(server.cli("TIME").lines().findFirst().orElseThrow()) % 86_400
        > 86_400 - 180) {
      assertTrue(System.nanoTime() < deadline, "redis's clock did not move");
      Thread.sleep(1_000); // a condition wait with a deadline
    }
  }

  /** Until the replica has loaded its master's data and follows it. */
  private static void awaitSynced(RedisServer replica) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!replica.cli("INFO", "replication").contains("master_link_status:up")) {
      assertTrue(System.nanoTime() < deadline, "the replica never synced");
      Thread.sleep(20); // a condition wait with a deadline
    }
  }

  /** Milliseconds until {@code server} has run {@code n} of the demo's decisions. */
  private static long untilDecided(RedisServer server, long n, Duration max)
      throws InterruptedException {
    long t0 = System.nanoTime();
    while (scriptsRun(server) < n) {
      assertTrue(
          System.nanoTime() - t0 < max.toNanos(),
          "the demo did not decide on the new master within " + max);
      Thread.sleep(10); // a condition wait with a deadline
    }
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
  }

  /** Scripts {@code server} ran itself ({@code EVALSHA}, {@code EVAL}): the store's decisions. */
  private static long scriptsRun(RedisServer server) {
    Matcher m =
        Pattern.compile("cmdstat_(evalsha|eval):calls=(\\d+)")
            .matcher(server.cli("INFO", "commandstats"));
    long n = 0;
    while (m.find()) {
      n += Long.parseLong(m.group(2));
    }
    return n;
  }
}
