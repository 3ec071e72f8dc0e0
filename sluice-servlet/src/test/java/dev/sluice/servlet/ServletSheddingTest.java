package dev.sluice.servlet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.http.RequestLimiter;
import dev.sluice.spi.FakeClock;
import dev.sluice.spi.ReferenceCounterStore;
import dev.sluice.yaml.YamlRules;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.glassfish.grizzly.http.server.HttpServer;
import org.glassfish.grizzly.servlet.WebappContext;
import org.junit.jupiter.api.Test;

/** Load shedding in the servlet filter: a 503 of type temporary-reduced-capacity, no quota. */
class ServletSheddingTest {

  private final HttpClient http =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private final CountDownLatch started = new CountDownLatch(1);
  private volatile AsyncContext pending;

  @Test
  void pastTheFleetsNonCriticalShareARequestIsShedWithA503() throws Exception {
    RequestLimiter limiter =
        RequestLimiter.builder(new ReferenceCounterStore())
            .clock(new FakeClock())
            .rules(
                YamlRules.parse(
                    """
                    loadShedding:
                      classes:
                        - { name: critical, priority: critical, match: { methods: [POST] } }
                        - { name: reads, priority: 2 }
                      fleet: { capacity: 2, reserve: 50% }
                    rules: []
                    """,
                    "shedding.yaml"))
            .build();
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    HttpServer server = HttpServer.createSimpleServer(null, "127.0.0.1", port);
    WebappContext app = new WebappContext("test", "/app");
    var hold =
        app.addServlet(
            "hold",
            new HttpServlet() {
              @Override
              protected void doGet(HttpServletRequest req, HttpServletResponse res) {
                pending = req.startAsync();
                pending.setTimeout(30_000);
                started.countDown();
              }

              @Override
              protected void doPost(HttpServletRequest req, HttpServletResponse res)
                  throws java.io.IOException {
                res.getWriter().write("saved");
              }
            });
    hold.addMapping("/hold");
    hold.setAsyncSupported(true);
    var filter = app.addFilter("sluice", new SluiceFilter(limiter));
    filter.addMappingForUrlPatterns(null, "/*");
    filter.setAsyncSupported(true);
    app.deploy(server);
    server.start();
    try {
      CompletableFuture<HttpResponse<String>> first = send(port, "GET");
      assertTrue(started.await(30, TimeUnit.SECONDS), "one read in flight: the whole share");
      HttpResponse<String> shed = send(port, "GET").get(30, TimeUnit.SECONDS);
      assertEquals(503, shed.statusCode());
      assertTrue(shed.body().contains("temporary-reduced-capacity"), shed.body());
      assertTrue(shed.body().contains("\"priorityClass\":\"reads\""), shed.body());
      assertEquals("1", shed.headers().firstValue("Retry-After").orElse(""));
      assertFalse(shed.headers().firstValue("X-RateLimit-Limit").isPresent());
      assertEquals(200, send(port, "POST").get(30, TimeUnit.SECONDS).statusCode(), "critical");
      pending.getResponse().getWriter().write("done");
      pending.complete();
      assertEquals(200, first.get(30, TimeUnit.SECONDS).statusCode());
    } finally {
      server.shutdownNow();
    }
  }

  private CompletableFuture<HttpResponse<String>> send(int port, String method) {
    return http.sendAsync(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/app/hold"))
            .method(method, HttpRequest.BodyPublishers.noBody())
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }
}
