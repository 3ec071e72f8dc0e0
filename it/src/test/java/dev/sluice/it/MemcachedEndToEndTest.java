package dev.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.jaxrs.SluiceFeature;
import dev.sluice.spi.FakeClock;
import dev.sluice.store.memcached.MemcachedCounterStore;
import dev.sluice.testkit.Memcached;
import dev.sluice.testkit.MemcachedServer;
import dev.sluice.yaml.RulesException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The demo API with Sluice on a real memcached, over HTTP on loopback. */
@Memcached
class MemcachedEndToEndTest {

  private static MemcachedServer memcached;
  private static final AtomicInteger PREFIX = new AtomicInteger();

  @TempDir Path dir;
  private Path rulesFile;
  private final FakeClock clock = new FakeClock(System.currentTimeMillis() / 60_000 * 60_000);
  private MemcachedCounterStore store;
  private App app;

  static final String RULES =
      """
      trustedProxies: [10.0.0.0/8]
      rules:
        - id: per-key
          match: { prefix: /api/v1 }
          key: [header:X-Api-Key, ip]
          algorithm: fixed-window
          tiers: [ { limit: 3, period: 10s } ]
        - id: customer-wide
          match: { prefix: /api }
          key: [header:X-Customer-Id]
          algorithm: fixed-window
          tiers: [ { limit: 5, period: 10s } ]
        - id: products
          match: { methods: [GET], path: "/v1/organizations/{orgId}/product/*" }
          key: [path:orgId]
          tiers: [ { limit: 2, period: 1m } ]
        - id: dark
          match: { methods: [PUT], prefix: /v1 }
          key: [ip]
          tiers: [ { limit: 1, period: 1m } ]
          shadow: true
      """;

  @BeforeAll
  static void startMemcached(MemcachedServer started) {
    memcached = started;
  }

  @BeforeEach
  void startApp() throws Exception {
    rulesFile = dir.resolve("rules.yaml");
    Files.writeString(rulesFile, RULES);
    if (!memcached.answers()) {
      memcached.restart();
    }
    store =
        MemcachedCounterStore.builder()
            .servers(memcached.address())
            .prefix("e2e" + PREFIX.incrementAndGet())
            .operationTimeout(Duration.ofMillis(100))
            .build();
    app =
        new App(
            SluiceFeature.builder(store)
                .rulesFile(rulesFile)
                .watchInterval(Duration.ofMillis(100))
                .clock(clock)
                .build());
  }

  @AfterEach
  void stopApp() {
    if (app != null) {
      app.close();
      store.close();
    }
  }

  @Test
  void headersCountDownThenA429ThatAgreesWithTheClock() {
    clock.advanceMillis(4_000);
    for (int i = 1; i <= 3; i++) {
      HttpResponse<String> r = app.get("/api/v1/report", "X-Api-Key", "k1");
      assertEquals(200, r.statusCode());
      assertEquals(String.valueOf(3 - i), header(r, "X-RateLimit-Remaining"));
      assertEquals("6", header(r, "X-RateLimit-Reset"));
    }
    HttpResponse<String> rejected = app.get("/api/v1/report", "X-Api-Key", "k1");
    assertEquals(429, rejected.statusCode());
    assertEquals("6", header(rejected, "Retry-After"));
    assertTrue(rejected.body().contains("\"policy\":\"per-key\""), rejected.body());
    assertEquals(
        200, app.get("/api/v1/report", "X-Api-Key", "k2").statusCode(), "identities stay apart");
    clock.advanceMillis(6_000);
    assertEquals(
        200, app.get("/api/v1/report", "X-Api-Key", "k1").statusCode(), "passes at Retry-After");
  }

  @Test
  void aCustomerWideRuleCapsSeveralApiKeysTogether() {
    int allowed = 0;
    for (int key = 0; key < 4; key++) {
      for (int i = 0; i < 3; i++) {
        HttpResponse<String> r =
            app.get("/api/v1/report", "X-Api-Key", "key-" + key, "X-Customer-Id", "acme");
        allowed += r.statusCode() == 200 ? 1 : 0;
      }
    }
    assertEquals(5, allowed, "acme's 5 across its keys");
    // key-3 never got through (acme was full): its per-key counts were given back.
    assertEquals(
        200,
        app.get("/api/v1/report", "X-Api-Key", "key-3", "X-Customer-Id", "globex").statusCode());
  }

  @Test
  void pathCapturesKeyTheTenantAndShadowRulesNeverReject() {
    assertEquals(200, app.get("/v1/organizations/a/product/1").statusCode());
    assertEquals(200, app.get("/v1/organizations/a/product/2").statusCode());
    assertEquals(429, app.get("/v1/organizations/a/product/3").statusCode());
    assertEquals(200, app.get("/v1/organizations/b/product/3").statusCode());
    for (int i = 0; i < 5; i++) {
      assertEquals(
          200, app.send("PUT", "/v1/organizations/a/product/" + i).statusCode(), "dark launch");
    }
  }

  @Test
  void aSpoofedForwardedForFromAnUntrustedPeerIsIgnored() {
    for (int i = 0; i < 3; i++) {
      app.get("/api/v1/report");
    }
    for (int i = 0; i < 10; i++) {
      assertEquals(
          429,
          app.get(
                  "/api/v1/report",
                  "X-Forwarded-For",
                  "198.51.100." + i,
                  "Forwarded",
                  "for=198.51.100." + i)
              .statusCode());
    }
  }

  @Test
  void theKillSwitchAndALiveFileEditTakeEffect() throws Exception {
    for (int i = 0; i < 3; i++) {
      app.get("/api/v1/report", "X-Api-Key", "live");
    }
    assertEquals(429, app.get("/api/v1/report", "X-Api-Key", "live").statusCode());
    app.feature.limiter().setEnabled(false);
    assertEquals(200, app.get("/api/v1/report", "X-Api-Key", "live").statusCode());
    app.feature.limiter().setEnabled(true);
    assertEquals(429, app.get("/api/v1/report", "X-Api-Key", "live").statusCode());

    Files.writeString(rulesFile, RULES.replace("limit: 3, period: 10s", "limit: 30, period: 10s"));
    assertTrue(
        MemcachedServer.await(
            Duration.ofSeconds(5),
            () -> app.get("/api/v1/report", "X-Api-Key", "live").statusCode() == 200),
        "the edit took effect");
    assertEquals("30", header(app.get("/api/v1/report", "X-Api-Key", "live"), "X-RateLimit-Limit"));

    Files.writeString(rulesFile, "enabled: false\n" + RULES);
    assertTrue(
        MemcachedServer.await(
            Duration.ofSeconds(5), () -> !app.feature.limiter().rules().enabled()),
        "the kill switch from the file");
  }

  @Test
  void aBadEditIsIgnoredAndTheLastGoodRulesStay() throws Exception {
    Files.writeString(
        rulesFile, RULES.replace("limit: 3, period: 10s", "limit: 3, period: 10 seconds"));
    // The watcher checks every 100 ms; give it several chances to (wrongly) take the edit.
    assertFalse(
        MemcachedServer.await(
            Duration.ofMillis(600),
            () ->
                app.feature.limiter().rules().rule("per-key").orElseThrow().tiers().get(0).limit()
                    != 3));
    assertEquals(429, sendFour("bad-edit"), "still limited at 3");
  }

  @Test
  void memcachedKilledFailsOpenAndRestartedLimitsAgain() {
    memcached.kill();
    try {
      for (int i = 0; i < 10; i++) {
        HttpResponse<String> r = app.get("/api/v1/report", "X-Api-Key", "dead");
        assertEquals(200, r.statusCode(), "fail open, never a 5xx");
        assertFalse(r.headers().firstValue("X-RateLimit-Limit").isPresent(), "no made-up usage");
      }
    } finally {
      memcached.restart();
    }
    assertTrue(
        MemcachedServer.await(
            Duration.ofSeconds(5),
            () ->
                app.get("/api/v1/report", "X-Api-Key", "after")
                    .headers()
                    .firstValue("X-RateLimit-Limit")
                    .isPresent()),
        "limiting resumes");
  }

  @Test
  void aMalformedRulesFileNamesItsLineAndField() throws Exception {
    Path bad = dir.resolve("bad.yaml");
    Files.writeString(bad, RULES.replace("key: [path:orgId]", "key: [path:tenant]"));
    RulesException e = assertThrows(RulesException.class, () -> SluiceFeature.fromYaml(bad, store));
    assertEquals(15, e.line());
    assertEquals("rules[2].key[0]", e.field());
  }

  private int sendFour(String key) {
    int last = 0;
    for (int i = 0; i < 4; i++) {
      last = app.get("/api/v1/report", "X-Api-Key", key).statusCode();
    }
    return last;
  }

  private static String header(HttpResponse<?> r, String name) {
    return r.headers().firstValue(name).orElse(null);
  }
}
