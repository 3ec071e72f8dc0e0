package dev.sluice.servlet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.http.RequestLimiter;
import dev.sluice.spi.FakeClock;
import dev.sluice.spi.ReferenceCounterStore;
import dev.sluice.yaml.YamlRules;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.glassfish.grizzly.http.server.HttpServer;
import org.glassfish.grizzly.servlet.WebappContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The servlet filter in a real servlet container (Grizzly), over HTTP on loopback. */
class SluiceFilterTest {

  private final FakeClock clock = new FakeClock();
  private final HttpClient http =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private HttpServer server;
  private RequestLimiter limiter;
  private int port;

  @BeforeEach
  void start() throws IOException {
    limiter =
        RequestLimiter.builder(new ReferenceCounterStore())
            .clock(clock)
            .rules(
                YamlRules.parse(
                    """
        rules:
          - id: report
            match: { methods: [GET], path: /api/v1/report }
            key: [header:X-Api-Key, ip]
            algorithm: fixed-window
            tiers: [ { limit: 2, period: 1m } ]
        """,
                    "servlet-rules.yaml"))
            .build();
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    server = HttpServer.createSimpleServer(null, "127.0.0.1", port);
    WebappContext app = new WebappContext("test", "/app");
    app.addServlet(
            "hello",
            new HttpServlet() {
              @Override
              protected void doGet(HttpServletRequest req, HttpServletResponse res)
                  throws IOException {
                res.setContentType("application/json");
                res.getWriter().write("{\"ok\":true}");
              }
            })
        .addMapping("/*");
    app.addFilter("sluice", new SluiceFilter(limiter)).addMappingForUrlPatterns(null, "/*");
    app.deploy(server);
    server.start();
  }

  @AfterEach
  void stop() {
    server.shutdownNow();
  }

  private HttpResponse<String> get(String path, String key) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/app" + path));
    if (key != null) {
      b.header("X-Api-Key", key);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void limitsAndAnswersLikeTheJaxrsFeature() throws Exception {
    HttpResponse<String> first = get("/api/v1/report", "k");
    assertEquals(200, first.statusCode());
    assertEquals("2", first.headers().firstValue("X-RateLimit-Limit").orElseThrow());
    assertEquals("1", first.headers().firstValue("X-RateLimit-Remaining").orElseThrow());
    assertEquals("60", first.headers().firstValue("X-RateLimit-Reset").orElseThrow());
    assertEquals("{\"ok\":true}", first.body());
    assertEquals(200, get("/api/v1/report", "k").statusCode());
    HttpResponse<String> rejected = get("/api/v1/report", "k");
    assertEquals(429, rejected.statusCode());
    assertEquals("60", rejected.headers().firstValue("Retry-After").orElseThrow());
    assertEquals("no-store", rejected.headers().firstValue("Cache-Control").orElseThrow());
    assertTrue(
        rejected
            .headers()
            .firstValue("Content-Type")
            .orElseThrow()
            .startsWith("application/problem+json"));
    assertTrue(rejected.body().contains("\"policy\":\"report\""), rejected.body());
  }

  @Test
  void pathSpellingsCannotDodgeTheRule() throws Exception {
    get("/api/v1/report", "s");
    get("/api/v1/report/", "s");
    for (String spelling :
        new String[] {
          "/api//v1/report", "/api/v1/report/", "/api/./v1/report", "/api/v1/x/../report"
        }) {
      assertEquals(429, get(spelling, "s").statusCode(), spelling);
    }
  }

  @Test
  void thePeerAddressIsTheIpKey() throws Exception {
    assertEquals(200, get("/api/v1/report", null).statusCode());
    assertEquals(200, get("/api/v1/report", null).statusCode());
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/app/api/v1/report"))
                .header("X-Forwarded-For", "1.2.3.4")
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertEquals(429, r.statusCode(), "127.0.0.1 is not a trusted proxy");
  }
}
