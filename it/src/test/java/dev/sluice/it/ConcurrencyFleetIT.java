package dev.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.example.Demo;
import dev.sluice.example.DemoResources;
import dev.sluice.testkit.Memcached;
import dev.sluice.testkit.MemcachedServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The concurrency limit across a fleet on one real memcached: three instances never let a key have
 * more than its capacity in flight, and the slots of an instance killed with SIGKILL come back
 * within the stated bound.
 */
@Memcached
class ConcurrencyFleetIT {

  private static MemcachedServer memcached;
  // One client per test (no pooled connection outlives its server), HTTP/1.1 (no h2c upgrade).
  private final HttpClient http =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @TempDir Path dir;

  @BeforeAll
  static void start(MemcachedServer started) {
    memcached = started;
  }

  private static Demo demo(Path rules) {
    Demo.Options o = new Demo.Options().host("127.0.0.1").port(0).memcached(memcached.address());
    if (rules != null) {
      o.rules(rules);
    }
    return Demo.start(
        o, new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
  }

  private CompletableFuture<HttpResponse<String>> slow(int port, String key, long ms) {
    return http.sendAsync(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/v1/slow?ms=" + ms))
            .header("X-Api-Key", key)
            .timeout(Duration.ofSeconds(60))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /**
   * Waits until the instance's first decisions are counted in memcached: a just-started client may
   * miss its first answers, and a decision the store did not answer in time is decided locally,
   * which is the fault tests' subject, not this one's.
   */
  private void awaitCounted(int port) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    String key = "warm-up-" + UUID.randomUUID();
    // The bundled rules limit locally at a share (limit ÷ 3) when the store fails: the backstop's
    // full 60 is the store's. (The concurrency rule is in no header of an allowed response.)
    while (!slow(port, key, 0)
        .get(30, TimeUnit.SECONDS)
        .headers()
        .firstValue("RateLimit-Policy")
        .orElse("")
        .contains("\"per-ip-backstop\";q=60;")) {
      assertTrue(System.nanoTime() < deadline, "memcached never answered the instance in time");
      Thread.sleep(50);
    }
  }

  @Test
  void threeInstancesNeverLetAKeyHaveMoreThanTwoInFlight() throws Exception {
    List<Demo> demos = new ArrayList<>();
    try {
      for (int i = 0; i < 3; i++) {
        demos.add(demo(null));
        awaitCounted(demos.get(i).port());
      }
      String key = "fleet-" + UUID.randomUUID();
      List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
      for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 12; i++) {
          calls.add(slow(demos.get(i % 3).port(), key, 300));
        }
        Thread.sleep(400);
      }
      Map<Integer, Integer> codes = new TreeMap<>();
      for (CompletableFuture<HttpResponse<String>> c : calls) {
        HttpResponse<String> r = c.get(60, TimeUnit.SECONDS);
        codes.merge(r.statusCode(), 1, Integer::sum);
        if (r.statusCode() == 429) {
          assertTrue(r.body().contains("Concurrency limit of 2"), r.body());
          assertEquals("1", r.headers().firstValue("Retry-After").orElse(""));
        }
      }
      int peak = DemoResources.peakInFlight(key);
      assertTrue(peak >= 1 && peak <= 2, "never more than 2 in flight: " + peak + ", " + codes);
      assertTrue(codes.getOrDefault(200, 0) >= 2 && codes.getOrDefault(429, 0) > 0, "" + codes);
      assertEquals(36, codes.getOrDefault(200, 0) + codes.getOrDefault(429, 0), "no 5xx: " + codes);
    } finally {
      demos.forEach(Demo::close);
    }
  }

  @Test
  void theSlotsOfAnInstanceKilledWhileHoldingThemComeBackWithinTwoSlotTtls() throws Exception {
    Duration ttl = Duration.ofSeconds(2);
    Path rules = dir.resolve("rules.yaml");
    Files.writeString(
        rules,
        """
        rules:
          - id: slow-in-flight
            match: { methods: [GET], path: /api/v1/slow }
            key: [header:X-Api-Key]
            concurrency: 2
            slotTtl: 2s
        """);
    DemoProcess doomed =
        DemoProcess.start(
            dir.resolve("doomed.log"),
            "--memcached",
            memcached.address(),
            "--rules",
            rules.toString());
    int port = doomed.port;
    Demo survivor = demo(rules);
    try {
      // Two requests that will still be running when their instance is killed. A probe through
      // the survivor that reaches the store before one of them gets that one refused; then the
      // attempt starts again on a fresh key (the first one's slots would expire while it runs).
      String key = null;
      List<CompletableFuture<HttpResponse<String>>> held = List.of();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      boolean both = false;
      while (!both) {
        assertTrue(System.nanoTime() < deadline, "the doomed instance never held both slots");
        key = "doomed-" + UUID.randomUUID();
        held = List.of(slow(port, key, 10_000), slow(port, key, 10_000));
        Thread.sleep(300);
        int probe = slow(survivor.port(), key, 0).get(20, TimeUnit.SECONDS).statusCode();
        both = probe == 429 && held.stream().noneMatch(CompletableFuture::isDone);
      }
      doomed.process.destroyForcibly();
      assertTrue(doomed.process.waitFor(20, TimeUnit.SECONDS));
      for (CompletableFuture<HttpResponse<String>> h : held) {
        assertTrue(
            h.handle((r, e) -> e != null).get(20, TimeUnit.SECONDS),
            "the held requests died with their instance");
      }
      long killed = System.nanoTime();
      while (slow(survivor.port(), key, 0).get(20, TimeUnit.SECONDS).statusCode() != 200) {
        assertTrue(System.nanoTime() - killed < TimeUnit.SECONDS.toNanos(30), "never came back");
        Thread.sleep(100);
      }
      double seconds = (System.nanoTime() - killed) / 1e9;
      // The bound: 2 slot TTLs, plus the 1 s a refused client is told to wait (the deny cache).
      double bound = 2 * ttl.toSeconds() + 1;
      assertTrue(seconds <= bound + 1.5, "back after " + seconds + " s; bound " + bound + " s");
    } finally {
      doomed.close();
      survivor.close();
    }
  }
}
