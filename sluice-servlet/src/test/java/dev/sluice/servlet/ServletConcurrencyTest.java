package dev.sluice.servlet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.http.RequestLimiter;
import dev.sluice.spi.FakeClock;
import dev.sluice.spi.ReferenceCounterStore;
import dev.sluice.yaml.YamlRules;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A concurrency rule in the servlet filter: plain, failing and async requests give slots back. */
class ServletConcurrencyTest {

  private static final long TTL = 30_000;
  private final FakeClock clock = new FakeClock(1_700_000_000_000L);
  private final ReferenceCounterStore store = new ReferenceCounterStore();
  private final HttpClient http =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private volatile CountDownLatch asyncStarted = new CountDownLatch(1);
  private final CountDownLatch slowEntered = new CountDownLatch(1);
  private volatile AsyncContext pending;
  private HttpServer server;
  private int port;

  @BeforeEach
  void start() throws IOException {
    RequestLimiter limiter =
        RequestLimiter.builder(store)
            .clock(clock)
            .rules(
                YamlRules.parse(
                    """
        rules:
          - id: in-flight
            match: { prefix: / }
            key: [header:X-Api-Key]
            concurrency: 1
        """,
                    "servlet-concurrency.yaml"))
            .build();
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    server = HttpServer.createSimpleServer(null, "127.0.0.1", port);
    WebappContext app = new WebappContext("test", "/app");
    app.addServlet(
            "plain",
            new HttpServlet() {
              @Override
              protected void doGet(HttpServletRequest req, HttpServletResponse res)
                  throws IOException {
                if (req.getParameter("fail") != null) {
                  throw new IllegalStateException("the servlet failed");
                }
                res.getWriter().write("ok");
              }
            })
        .addMapping("/plain");
    app.addServlet(
            "slow",
            new HttpServlet() {
              @Override
              protected void doGet(HttpServletRequest req, HttpServletResponse res)
                  throws IOException {
                slowEntered.countDown();
                try {
                  Thread.sleep(500);
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
                // A large body to a client that is gone: the write fails, or is dropped.
                byte[] chunk = new byte[64 * 1024];
                for (int i = 0; i < 32; i++) {
                  res.getOutputStream().write(chunk);
                  res.flushBuffer();
                }
              }
            })
        .addMapping("/slow");
    var async =
        app.addServlet(
            "async",
            new HttpServlet() {
              @Override
              protected void doGet(HttpServletRequest req, HttpServletResponse res) {
                pending = req.startAsync();
                pending.setTimeout(30_000);
                asyncStarted.countDown();
              }
            });
    async.addMapping("/async");
    async.setAsyncSupported(true);
    var filter = app.addFilter("sluice", new SluiceFilter(limiter));
    filter.addMappingForUrlPatterns(null, "/*");
    filter.setAsyncSupported(true);
    app.deploy(server);
    server.start();
  }

  @AfterEach
  void stop() {
    server.shutdownNow();
  }

  private long inFlight(String key) {
    String identity = "header:X-Api-Key=" + key;
    long w = clock.millis() / TTL;
    return store.count("in-flight", identity, TTL, w)
        + store.count("in-flight", identity, TTL, w - 1);
  }

  private CompletableFuture<HttpResponse<String>> get(String path, String key) {
    return http.sendAsync(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/app" + path))
            .header("X-Api-Key", key)
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void plainAndFailingRequestsGiveTheirSlotBack() throws Exception {
    for (int i = 0; i < 3; i++) {
      assertEquals(200, get("/plain", "k1").get(30, TimeUnit.SECONDS).statusCode());
      assertEquals(500, get("/plain?fail=1", "k1").get(30, TimeUnit.SECONDS).statusCode());
    }
    assertEquals(0, inFlight("k1"));
  }

  @Test
  void aClientThatDisconnectsMidRequestGivesItsSlotBack() throws Exception {
    try (java.net.Socket socket =
        new java.net.Socket(java.net.InetAddress.getLoopbackAddress(), port)) {
      socket
          .getOutputStream()
          .write(
              "GET /app/slow HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: k4\r\n\r\n"
                  .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      socket.getOutputStream().flush();
      assertTrue(slowEntered.await(30, TimeUnit.SECONDS));
      assertEquals(1, inFlight("k4"), "held while the servlet runs");
      // Gone at once, with a reset: no response will be read.
      socket.setSoLinger(true, 0);
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (inFlight("k4") != 0 && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertEquals(0, inFlight("k4"), "given back although the client never read the response");
    assertEquals(200, get("/plain", "k4").get(30, TimeUnit.SECONDS).statusCode());
  }

  @Test
  void anAsyncRequestHoldsItsSlotUntilItCompletes() throws Exception {
    CompletableFuture<HttpResponse<String>> first = get("/async", "k2");
    assertTrue(asyncStarted.await(30, TimeUnit.SECONDS));
    assertEquals(1, inFlight("k2"), "held after the filter chain returned");
    HttpResponse<String> second = get("/plain", "k2").get(30, TimeUnit.SECONDS);
    assertEquals(429, second.statusCode());
    assertTrue(second.body().contains("Concurrency limit of 1"), second.body());
    pending.getResponse().getWriter().write("done");
    pending.complete();
    assertEquals(200, first.get(30, TimeUnit.SECONDS).statusCode());
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (inFlight("k2") != 0 && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertEquals(0, inFlight("k2"), "given back when the async context completed");
  }
}
