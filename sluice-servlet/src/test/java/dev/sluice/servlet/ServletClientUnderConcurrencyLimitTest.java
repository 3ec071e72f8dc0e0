package dev.sluice.servlet;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.http.RequestLimiter;
import dev.sluice.spi.FakeClock;
import dev.sluice.spi.SlowReleaseStore;
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
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.glassfish.grizzly.http.server.HttpServer;
import org.glassfish.grizzly.servlet.WebappContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A client that never has more than {@code concurrency} requests in flight is never refused by the
 * servlet filter, over real HTTP (Grizzly): each of two clients sends its next request the instant
 * it has read the last response, against {@code concurrency: 2}, whether the servlet closes its
 * stream, completes a declared length, or answers asynchronously. The store takes 20 ms to give a
 * slot back, so a slot released after the response went out is still held when the next comes.
 */
class ServletClientUnderConcurrencyLimitTest {

  private static final long TTL = 30_000;
  private static final int CLIENTS = 2;
  private static final int REQUESTS = 30;

  private final FakeClock clock = new FakeClock(1_700_000_000_000L);
  private final SlowReleaseStore store = new SlowReleaseStore(20);
  private final ExecutorService answering = Executors.newCachedThreadPool();
  private HttpServer server;
  private RequestLimiter limiter;
  private int port;

  private static final byte[] OK = "ok".getBytes(StandardCharsets.US_ASCII);

  private static HttpServlet servlet(ServletBody body) {
    return new HttpServlet() {
      @Override
      protected void doGet(HttpServletRequest req, HttpServletResponse res) throws IOException {
        body.write(req, res);
      }
    };
  }

  private interface ServletBody {
    void write(HttpServletRequest req, HttpServletResponse res) throws IOException;
  }

  @BeforeEach
  void start() throws IOException {
    limiter =
        RequestLimiter.builder(store)
            .clock(clock)
            .rules(
                YamlRules.parse(
                    """
                    rules:
                      - id: in-flight
                        match: { prefix: / }
                        key: [header:X-Api-Key]
                        concurrency: 2
                    """,
                    "in-flight.yaml"))
            .build();
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    server = HttpServer.createSimpleServer(null, "127.0.0.1", port);
    WebappContext app = new WebappContext("test", "/app");
    app.addServlet("plain", servlet((req, res) -> res.getWriter().write("ok")))
        .addMapping("/plain");
    app.addServlet(
            "closed",
            servlet(
                (req, res) -> {
                  res.getWriter().write("ok");
                  res.getWriter().close();
                }))
        .addMapping("/closed");
    app.addServlet(
            "stream-closed",
            servlet(
                (req, res) -> {
                  res.getOutputStream().write(new byte[64 * 1024]);
                  res.getOutputStream().close();
                }))
        .addMapping("/stream-closed");
    app.addServlet(
            "length",
            servlet(
                (req, res) -> {
                  res.setContentLength(OK.length);
                  res.getOutputStream().write(OK);
                  res.flushBuffer();
                }))
        .addMapping("/length");
    var async =
        app.addServlet(
            "async",
            servlet(
                (req, res) -> {
                  AsyncContext ctx = req.startAsync();
                  answering.execute(
                      () -> {
                        try {
                          ctx.getResponse().getWriter().write("ok");
                        } catch (IOException e) {
                          throw new IllegalStateException(e);
                        }
                        ctx.complete();
                      });
                }));
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
    answering.shutdownNow();
    limiter.close();
  }

  private long inFlight(String key) {
    String identity = "header:X-Api-Key=" + key;
    long w = clock.millis() / TTL;
    return store.store.count("in-flight", identity, TTL, w)
        + store.store.count("in-flight", identity, TTL, w - 1);
  }

  /** Each client in turn: its next request the instant it has read the last response. */
  private void neverRefused(String path) throws Exception {
    AtomicInteger refused = new AtomicInteger();
    AtomicInteger served = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(CLIENTS);
    try {
      List<Future<?>> clients = new ArrayList<>();
      for (int c = 0; c < CLIENTS; c++) {
        clients.add(
            pool.submit(
                () -> {
                  HttpClient http =
                      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
                  for (int i = 0; i < REQUESTS; i++) {
                    HttpResponse<byte[]> r =
                        http.send(
                            HttpRequest.newBuilder(
                                    URI.create("http://127.0.0.1:" + port + "/app" + path))
                                .header("X-Api-Key", "k")
                                .build(),
                            HttpResponse.BodyHandlers.ofByteArray());
                    (r.statusCode() == 429 ? refused : served).incrementAndGet();
                  }
                  return null;
                }));
      }
      for (Future<?> f : clients) {
        f.get(120, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertEquals(0, refused.get(), "429s to clients within their limit, of " + CLIENTS * REQUESTS);
    assertEquals(CLIENTS * REQUESTS, served.get());
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (inFlight("k") != 0 && System.nanoTime() < deadline) {
      LockSupport.parkNanos(1_000_000);
    }
    assertEquals(0, inFlight("k"), "every slot given back");
  }

  @Test
  void aResponseTheContainerCompletes() throws Exception {
    neverRefused("/plain");
  }

  @Test
  void aResponseWhoseWriterTheServletCloses() throws Exception {
    neverRefused("/closed");
  }

  @Test
  void aResponseWhoseStreamTheServletCloses() throws Exception {
    neverRefused("/stream-closed");
  }

  @Test
  void aResponseThatCompletesItsDeclaredLength() throws Exception {
    neverRefused("/length");
  }

  @Test
  void anAsyncResponse() throws Exception {
    neverRefused("/async");
  }
}
