package dev.sluice.webflux;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.http.RequestLimiter;
import dev.sluice.spi.FakeClock;
import dev.sluice.spi.SlowReleaseStore;
import dev.sluice.testkit.HttpConnection;
import dev.sluice.yaml.YamlRules;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Flux;
import reactor.netty.resources.LoopResources;

/**
 * A client that never has more than {@code concurrency} requests in flight is never refused by the
 * WebFlux filter, over real HTTP (Reactor Netty): each of two clients sends its next request the
 * instant it has read the last response, against {@code concurrency: 2}, whether the body is one
 * value, empty, or a stream of values (chunked, or of a declared length). The store takes 20 ms to
 * give a slot back, so a slot released after the response went out is still held when the next
 * request comes. Each request goes on a new connection, which the server may give to another event
 * loop than the one still releasing; and once on one connection kept alive.
 */
class WebFluxClientUnderConcurrencyLimitTest {

  private static final long TTL = 30_000;
  private static final int CLIENTS = 2;
  private static final int REQUESTS = 50;

  private final FakeClock clock = new FakeClock(1_700_000_000_000L);
  private final SlowReleaseStore store = new SlowReleaseStore(20);
  // Not BlockHound's reactor-http- loops: the store's release takes its time in the loop's thread.
  private final LoopResources loops = LoopResources.create("slow-release", 4, true);
  private RequestLimiter limiter;
  private WebFluxServer app;

  private static RouterFunction<ServerResponse> routes() {
    return RouterFunctions.route()
        .GET("/plain", r -> ServerResponse.ok().bodyValue("ok"))
        .GET("/empty", r -> ServerResponse.ok().build())
        .GET(
            "/stream",
            r -> ServerResponse.ok().body(Flux.just("o", "k", "!").map(s -> s), String.class))
        .GET(
            "/stream-length",
            r ->
                ServerResponse.ok()
                    .contentLength(3)
                    .body(Flux.just("o", "k", "!").map(s -> s), String.class))
        .build();
  }

  @BeforeEach
  void start() {
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
    app = new WebFluxServer(limiter, routes(), null, s -> s.runOn(loops));
  }

  @AfterEach
  void stop() {
    app.close();
    loops.disposeLater().block(Duration.ofSeconds(10));
    limiter.close();
  }

  private long inFlight(String key) {
    String identity = "header:X-Api-Key=" + key;
    long w = clock.millis() / TTL;
    return store.store.count("in-flight", identity, TTL, w)
        + store.store.count("in-flight", identity, TTL, w - 1);
  }

  /** Each client in turn: its next request the instant it has read the last response. */
  private void neverRefused(String path, boolean keepAlive) throws Exception {
    AtomicInteger refused = new AtomicInteger();
    AtomicInteger served = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(CLIENTS);
    try {
      List<Future<?>> clients = new ArrayList<>();
      for (int c = 0; c < CLIENTS; c++) {
        clients.add(
            pool.submit(
                () -> {
                  HttpConnection kept =
                      keepAlive ? new HttpConnection(app.port(), Duration.ofSeconds(10)) : null;
                  try {
                    for (int i = 0; i < REQUESTS; i++) {
                      HttpConnection http =
                          keepAlive ? kept : new HttpConnection(app.port(), Duration.ofSeconds(10));
                      try {
                        http.send(HttpConnection.get(path, "X-Api-Key: k"));
                        String r = http.next();
                        (r.startsWith("HTTP/1.1 429") ? refused : served).incrementAndGet();
                      } finally {
                        if (!keepAlive) {
                          http.close();
                        }
                      }
                    }
                  } finally {
                    if (kept != null) {
                      kept.close();
                    }
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
  void aBodyOfOneValue() throws Exception {
    neverRefused("/plain", false);
  }

  @Test
  void anEmptyBody() throws Exception {
    neverRefused("/empty", false);
  }

  @Test
  void aStreamedBody() throws Exception {
    neverRefused("/stream", false);
  }

  @Test
  void aStreamedBodyOfADeclaredLength() throws Exception {
    neverRefused("/stream-length", false);
  }

  @Test
  void aBodyOfOneValueOnAConnectionKeptAlive() throws Exception {
    neverRefused("/plain", true);
  }

  @Test
  void aStreamedBodyOnAConnectionKeptAlive() throws Exception {
    neverRefused("/stream", true);
  }
}
