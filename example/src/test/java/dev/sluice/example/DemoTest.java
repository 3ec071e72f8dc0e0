package dev.sluice.example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.spi.FakeClock;
import dev.sluice.yaml.RulesException;
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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DemoTest {

  private final HttpClient http =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  private HttpResponse<String> send(Demo demo, String method, String path, String apiKey)
      throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + demo.port() + path))
            .method(method, HttpRequest.BodyPublishers.noBody());
    if (apiKey != null) {
      b.header("X-Api-Key", apiKey);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void theBundledRulesLimitTheDemoApiAndLeaveHealthAlone() throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    // A fixed instant: no window boundary can fall inside the test and let an extra request
    // through.
    FakeClock clock = new FakeClock();
    try (Demo demo =
        Demo.start(
            new Demo.Options().host("127.0.0.1").port(0).clock(clock),
            new PrintStream(out, true, StandardCharsets.UTF_8))) {
      String banner = out.toString(StandardCharsets.UTF_8);
      assertTrue(banner.contains("listening on http://127.0.0.1:" + demo.port()), banner);
      assertTrue(
          banner.contains("in-memory")
              && banner.contains("reports-per-key")
              && banner.contains("curl"),
          banner);
      for (int i = 0; i < 10; i++) {
        assertEquals(200, send(demo, "GET", "/api/v1/report", "demo").statusCode());
      }
      HttpResponse<String> r = send(demo, "GET", "/api/v1/report", "demo");
      assertEquals(429, r.statusCode());
      assertTrue(r.body().contains("reports-per-key"));
      for (int i = 0; i < 3; i++) {
        assertEquals(200, send(demo, "POST", "/api/v1/lead/" + i, "writer").statusCode());
      }
      assertEquals(429, send(demo, "POST", "/api/v1/lead/9", "writer").statusCode());
      assertEquals(200, send(demo, "PUT", "/v1/organizations/o/product/1", null).statusCode());
      for (int i = 0; i < 50; i++) {
        HttpResponse<String> h = send(demo, "GET", "/health", null);
        assertEquals(200, h.statusCode());
        assertFalse(h.headers().firstValue("X-RateLimit-Limit").isPresent());
      }
    }
  }

  @Test
  void theSearchBucketLetsFiveThroughAtOnceThenOneASecond() throws Exception {
    FakeClock clock = new FakeClock();
    try (Demo demo =
        Demo.start(
            new Demo.Options().host("127.0.0.1").port(0).clock(clock),
            new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8))) {
      for (int i = 1; i <= 5; i++) {
        HttpResponse<String> r = send(demo, "GET", "/api/v1/search?q=x", "searcher");
        assertEquals(200, r.statusCode());
        assertEquals("5", r.headers().firstValue("X-RateLimit-Limit").orElse(""));
        assertEquals(
            Integer.toString(5 - i), r.headers().firstValue("X-RateLimit-Remaining").orElse(""));
        assertEquals(
            Integer.toString(i),
            r.headers().firstValue("X-RateLimit-Reset").orElse(""),
            "full again after " + i + " s");
      }
      HttpResponse<String> sixth = send(demo, "GET", "/api/v1/search?q=x", "searcher");
      assertEquals(429, sixth.statusCode());
      assertEquals("1", sixth.headers().firstValue("Retry-After").orElse(""));
      assertTrue(sixth.body().contains("\"limitType\":\"token-bucket\""), sixth.body());
      assertTrue(sixth.body().contains("search-bucket"), sixth.body());
      clock.advance(Duration.ofSeconds(1));
      assertEquals(200, send(demo, "GET", "/api/v1/search?q=x", "searcher").statusCode());
      assertEquals(429, send(demo, "GET", "/api/v1/search?q=x", "searcher").statusCode());
    }
  }

  @Test
  void rotatingTheApiKeyHitsThePerAddressBackstop() throws Exception {
    try (Demo demo =
        Demo.start(
            new Demo.Options().host("127.0.0.1").port(0).clock(new FakeClock()),
            new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8))) {
      int allowed = 0;
      for (int i = 0; i < 100; i++) {
        allowed += send(demo, "GET", "/api/v1/report", "invented-" + i).statusCode() == 200 ? 1 : 0;
      }
      assertEquals(60, allowed, "per-ip-backstop: 60 per 10 s from one address, whatever the key");
    }
  }

  @Test
  void theCustomerWideLimitComesFromTheServersAccountsNotFromAHeader() throws Exception {
    try (Demo demo =
        Demo.start(
            new Demo.Options().host("127.0.0.1").port(0).clock(new FakeClock()),
            new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8))) {
      // Four keys of one customer, 10 requests each: each key is within its own 10, but the
      // customer's 30 caps them together, though no request names the customer.
      int allowed = 0;
      for (int i = 0; i < 10; i++) {
        for (int k = 1; k <= 4; k++) {
          HttpResponse<String> r = send(demo, "GET", "/api/v1/report", "acme-" + k);
          if (r.statusCode() == 200) {
            allowed++;
          } else {
            assertEquals(429, r.statusCode());
            assertTrue(r.body().contains("customer-wide"), r.body());
          }
        }
      }
      assertEquals(30, allowed, "customer-wide: 30 per 10 s across acme's keys");
      assertEquals(200, send(demo, "GET", "/api/v1/report", "globex-1").statusCode());
    }
  }

  @Test
  void aMalformedRulesFileNamesItsLineAndField(@TempDir Path dir) throws Exception {
    Path rules = dir.resolve("bad.yaml");
    Files.writeString(rules, "rules:\n  - id: r\n    tiers: [ { limit: -1, period: 1s } ]\n");
    RulesException e =
        assertThrows(
            RulesException.class,
            () ->
                Demo.start(new Demo.Options().host("127.0.0.1").port(0).rules(rules), System.out));
    assertEquals(3, e.line());
    assertEquals("rules[0].tiers[0].limit", e.field());
  }
}
