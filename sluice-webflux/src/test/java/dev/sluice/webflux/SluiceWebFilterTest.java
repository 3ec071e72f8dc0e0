package dev.sluice.webflux;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.http.ForwardedHeader;
import dev.sluice.http.PathSpellings;
import dev.sluice.http.RequestLimiter;
import dev.sluice.http.Rule;
import dev.sluice.http.RuleSet;
import dev.sluice.spi.CounterStore;
import dev.sluice.store.inmemory.InMemoryCounterStore;
import dev.sluice.store.memcached.MemcachedCounterStore;
import dev.sluice.store.redis.RedisCounterStore;
import dev.sluice.testkit.HttpConnection;
import dev.sluice.testkit.MemcachedServer;
import dev.sluice.testkit.RedisServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.core.Ordered;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import org.springframework.web.server.adapter.ForwardedHeaderTransformer;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;
import reactor.core.publisher.Sinks;
import reactor.netty.Connection;
import reactor.netty.http.server.HttpServer;

/**
 * The WebFlux filter on a real Reactor Netty server, BlockHound installed: the servlet filter's
 * limits, headers and bodies, its concurrency slots given back however a response ends, and the
 * path spellings and forged headers that the servlet filter and the JAX-RS feature withstand.
 */
class SluiceWebFilterTest {

  private static final Rule PER_KEY =
      Rule.builder("per-key")
          .path("/api/**")
          .key("header:X-Api-Key")
          .algorithm(Algorithm.TOKEN_BUCKET)
          .tier(3, Duration.ofHours(1))
          .build();

  /** One request at a time per key. */
  private static final Rule IN_FLIGHT =
      Rule.builder("in-flight")
          .path("/api/**")
          .key("header:X-Api-Key")
          .concurrency(1, Duration.ofMinutes(5))
          .build();

  private static RequestLimiter limiter(CounterStore store, Rule... rules) {
    RuleSet.Builder b = RuleSet.builder();
    for (Rule r : rules) {
      b.rule(r);
    }
    return RequestLimiter.builder(store).rules(b.build()).build();
  }

  private static RouterFunction<ServerResponse> hello() {
    return RouterFunctions.route()
        .GET("/api/{*rest}", r -> ServerResponse.ok().bodyValue("hello"))
        .build();
  }

  private static List<String> get(String path, String... headers) {
    List<String> lines = new ArrayList<>();
    lines.add("GET " + path + " HTTP/1.1");
    lines.addAll(List.of(headers));
    return lines;
  }

  @Test
  void limitsInMemoryWithTheHeadersAndBodyOfTheServletFilter() throws Exception {
    try (WebFluxServer app =
        new WebFluxServer(limiter(InMemoryCounterStore.create(), PER_KEY), hello())) {
      assertLimited(app);
    }
  }

  @Test
  void limitsOnMemcachedWithoutBlockingTheEventLoop() throws Exception {
    try (MemcachedServer memcached = MemcachedServer.start();
        MemcachedCounterStore store =
            MemcachedCounterStore.builder()
                .servers(memcached.address())
                .prefix("webflux")
                .operationTimeout(Duration.ofSeconds(1))
                // One instance: the host's clock, which never steps back under the bucket.
                .storeClock(false)
                .build();
        WebFluxServer app = new WebFluxServer(limiter(store, PER_KEY), hello())) {
      assertLimited(app);
    }
  }

  @Test
  void limitsOnRedisWithoutBlockingTheEventLoop() throws Exception {
    try (RedisServer redis = RedisServer.start();
        RedisCounterStore store =
            RedisCounterStore.builder()
                .uri(redis.uri())
                .prefix("webflux")
                .operationTimeout(Duration.ofSeconds(1))
                .build();
        WebFluxServer app = new WebFluxServer(limiter(store, PER_KEY), hello())) {
      assertLimited(app);
    }
  }

  /**
   * A decision memcached or Redis answers in its client's thread goes on in the request's event
   * loop, where Reactor Netty expects the handler and the response: continued from the store's
   * thread, Reactor Netty 1.2 and 1.3 left about one response in a thousand unsent.
   */
  @Test
  void aDecisionTheStoreAnsweredGoesOnInTheRequestsEventLoop() throws Exception {
    RouterFunction<ServerResponse> thread =
        RouterFunctions.route()
            .GET(
                "/api/thread",
                r -> {
                  Object request =
                      ServerHttpRequestDecorator.getNativeRequest(r.exchange().getRequest());
                  boolean own = ((Connection) request).channel().eventLoop().inEventLoop();
                  String where = own ? "its own loop" : Thread.currentThread().getName();
                  return ServerResponse.ok().bodyValue(where);
                })
            .build();
    try (MemcachedServer memcached = MemcachedServer.start();
        RedisServer redis = RedisServer.start();
        MemcachedCounterStore onMemcached =
            MemcachedCounterStore.builder()
                .servers(memcached.address())
                .prefix("loop")
                .operationTimeout(Duration.ofSeconds(5))
                .build();
        RedisCounterStore onRedis =
            RedisCounterStore.builder()
                .uri(redis.uri())
                .prefix("loop")
                .operationTimeout(Duration.ofSeconds(5))
                .build()) {
      for (CounterStore store : List.<CounterStore>of(onMemcached, onRedis)) {
        try (WebFluxServer app = new WebFluxServer(limiter(store, PER_KEY), thread)) {
          for (int i = 0; i < 200; i++) {
            String r = app.response(get("/api/thread", "X-Api-Key: k" + i));
            assertTrue(r.startsWith("HTTP/1.1 200"), r);
            assertTrue(r.contains("X-RateLimit-Remaining: 2"), r);
            String body = r.substring(r.indexOf("\r\n\r\n") + 4);
            assertEquals("its own loop", body, "where the handler ran");
          }
        }
      }
    }
  }

  /**
   * A request that arrives while the one before it on its connection is still being answered
   * (pipelined here; a keep-alive request can race the end of the previous response the same way)
   * and that the filter decides at once is answered, and so is the next request on that connection.
   * Completed inside Reactor Netty's dispatch of queued requests, such a request left the
   * connection unread (reactor-netty#4361): the next request waited until the client gave up. The
   * request ahead is kept in flight by the application's own slow handler, and by the store.
   */
  @Test
  void aRequestQueuedBehindAnotherIsAnsweredAndTheConnectionReadOn() throws Exception {
    RouterFunction<ServerResponse> routes =
        RouterFunctions.route()
            .GET("/api/{*rest}", r -> ServerResponse.ok().bodyValue("hello"))
            .GET(
                "/slow",
                r -> Mono.delay(Duration.ofMillis(20)).then(ServerResponse.ok().bodyValue("slow")))
            .GET("/open", r -> ServerResponse.ok().bodyValue("open"))
            .build();
    try (RedisServer redis = RedisServer.start();
        RedisCounterStore onRedis =
            RedisCounterStore.builder()
                .uri(redis.uri())
                .prefix("queued")
                .operationTimeout(Duration.ofSeconds(5))
                .build()) {
      for (CounterStore store : List.<CounterStore>of(InMemoryCounterStore.create(), onRedis)) {
        try (WebFluxServer app = new WebFluxServer(limiter(store, PER_KEY), routes)) {
          for (int i = 0; i < 10; i++) {
            String ahead =
                store == onRedis
                    ? HttpConnection.get("/api/queued", "X-Api-Key: q" + i)
                    : HttpConnection.get("/slow");
            try (HttpConnection c = new HttpConnection(app.port(), Duration.ofSeconds(5))) {
              c.send(ahead, HttpConnection.get("/open"));
              assertTrue(c.next().startsWith("HTTP/1.1 200"), "the request ahead");
              assertTrue(c.next().endsWith("\r\n\r\nopen"), "the request queued behind it");
              c.send(HttpConnection.get("/open"));
              assertTrue(c.next().endsWith("\r\n\r\nopen"), "the next request, " + store);
            }
          }
        }
      }
    }
  }

  @Test
  void reactorNettyReleasesBefore138AreTheOnesThatLeaveAQueuedRequestsConnectionUnread() {
    for (String stalls :
        new String[] {null, "", "snapshot", "0.9.25", "1.2.18", "1.2.99", "1.3.7", "1.3.8-M1"}) {
      assertTrue(SluiceWebFilter.queuedRequestsStall(stalls), stalls);
    }
    for (String fixed : new String[] {"1.3.8", "1.3.10", "1.4.0", "2.0.0"}) {
      assertFalse(SluiceWebFilter.queuedRequestsStall(fixed), fixed);
    }
    assertTrue(SluiceWebFilter.queuedRequestsStall("99999999999.0.0"), "too long to be a release");
    // Read from reactor-netty-http's own manifest: here Spring Boot 3.5's 1.2.
    String here = SluiceWebFilter.reactorNettyVersion(HttpServer.class.getPackage());
    assertTrue(here != null && here.startsWith("1.2."), "the version on this class path: " + here);
    assertNull(SluiceWebFilter.reactorNettyVersion(Test.class.getPackage()), "another jar's");
  }

  private static void assertLimited(WebFluxServer app) throws IOException {
    for (int i = 0; i < 3; i++) {
      String r = app.response(get("/api/items", "X-Api-Key: k"));
      assertTrue(r.startsWith("HTTP/1.1 200"), r);
      assertTrue(r.contains("X-RateLimit-Limit: 3"), r);
      assertTrue(r.contains("X-RateLimit-Remaining: " + (2 - i)), r);
      assertTrue(r.endsWith("hello"), r);
    }
    String refused = app.response(get("/api/items", "X-Api-Key: k"));
    assertTrue(refused.startsWith("HTTP/1.1 429"), refused);
    assertTrue(refused.contains("Retry-After: "), refused);
    assertTrue(refused.contains("Content-Type: application/problem+json"), refused);
    assertTrue(refused.contains("\"per-key\""), refused);
    assertTrue(
        app.response(get("/api/items", "X-Api-Key: other")).startsWith("HTTP/1.1 200"),
        "another key has its own limit");
    assertTrue(
        app.response(get("/elsewhere", "X-Api-Key: k")).startsWith("HTTP/1.1 404"),
        "a path no rule matches is not limited");
  }

  @Test
  void aConcurrencySlotIsGivenBackWhenTheResponseCompletesFailsOrIsCancelled() throws Exception {
    Sinks.One<String> release = Sinks.one();
    // Set when a handler runs: its request holds the slot from then on.
    AtomicInteger started = new AtomicInteger();
    RouterFunction<ServerResponse> routes =
        RouterFunctions.route()
            .GET(
                "/api/slow",
                r -> {
                  started.incrementAndGet();
                  return ServerResponse.ok().body(release.asMono(), String.class);
                })
            .GET(
                "/api/never",
                r -> {
                  started.incrementAndGet();
                  return ServerResponse.ok().body(Mono.never(), String.class);
                })
            .GET("/api/fails", r -> Mono.error(new IllegalStateException("handler failed")))
            .GET("/api/fast", r -> ServerResponse.ok().bodyValue("fast"))
            .build();
    try (WebFluxServer app =
        new WebFluxServer(limiter(InMemoryCounterStore.create(), IN_FLIGHT), routes)) {
      // Completes: the slot is held while the response is in flight, given back after.
      CompletableFuture<Integer> slow =
          CompletableFuture.supplyAsync(() -> status(app, "/api/slow"));
      awaitStarted(started, 1);
      assertEquals(429, status(app, "/api/fast"));
      release.tryEmitValue("done");
      assertEquals(200, slow.get(10, TimeUnit.SECONDS));
      awaitStatus(app, "/api/fast", 200);

      // Fails: given back when the failure leaves the chain, before the error's response is
      // written.
      awaitStatus(app, "/api/fails", 500);
      awaitStatus(app, "/api/fast", 200);

      // Cancelled: the client hangs up while the handler still works. The client sends again until
      // the handler runs (a connection the server has not read yet when the client hangs up).
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (true) {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), app.port())) {
          OutputStream out = s.getOutputStream();
          out.write(
              "GET /api/never HTTP/1.1\r\nHost: localhost\r\nX-Api-Key: k\r\n\r\n"
                  .getBytes(StandardCharsets.ISO_8859_1));
          out.flush();
          if (MemcachedServer.await(Duration.ofSeconds(1), () -> started.get() >= 2)) {
            assertEquals(429, status(app, "/api/fast"));
            break;
          }
        }
        assertTrue(System.nanoTime() < deadline, "the handler never ran");
      }
      awaitStatus(app, "/api/fast", 200);
    }
  }

  /**
   * A client that hangs up while its request is being decided: the concurrency slot the decision
   * then takes is given back, and the key's next request passes.
   */
  @Test
  void aSlotTakenForARequestCancelledWhileDecidedIsGivenBack() throws Exception {
    HeldStore store = new HeldStore();
    CountDownLatch cancelled = new CountDownLatch(1);
    WebFilter first = new CancelWatch(cancelled);
    try (WebFluxServer app = new WebFluxServer(limiter(store, IN_FLIGHT), hello(), first)) {
      try (Socket s = new Socket(InetAddress.getLoopbackAddress(), app.port())) {
        OutputStream out = s.getOutputStream();
        out.write(
            "GET /api/items HTTP/1.1\r\nHost: localhost\r\nX-Api-Key: k\r\n\r\n"
                .getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
        store.awaitDecision();
      }
      assertTrue(cancelled.await(10, TimeUnit.SECONDS), "the server never saw the hang-up");
      store.answer(); // the decision, made after the cancellation, takes the slot
      CompletableFuture<Integer> next =
          CompletableFuture.supplyAsync(() -> status(app, "/api/items"));
      store.awaitDecision();
      store.answer();
      assertEquals(200, next.get(10, TimeUnit.SECONDS), "the cancelled request's slot was kept");
    }
  }

  /**
   * The same on a request no Reactor Netty server made (another server's, or a test's): the
   * decision is left to finish, and gives its slot back.
   */
  @Test
  void aSlotTakenForARequestCancelledWhileDecidedIsGivenBackOnAnyServer() throws Exception {
    HeldStore store = new HeldStore();
    SluiceWebFilter filter = new SluiceWebFilter(limiter(store, IN_FLIGHT), 0);
    Disposable hungUp = filter.filter(exchange(), e -> Mono.never()).subscribe();
    store.awaitDecision();
    hungUp.dispose(); // the client hangs up while its request is decided
    store.answer(); // the decision takes the slot
    AtomicBoolean passed = new AtomicBoolean();
    var unused =
        filter
            .filter(
                exchange(),
                e -> {
                  passed.set(true);
                  return Mono.empty();
                })
            .subscribe();
    store.awaitDecision();
    store.answer(); // a request no server made goes on in the thread that answered: this one
    assertTrue(passed.get(), "the cancelled request's slot was kept");
  }

  private static MockServerWebExchange exchange() {
    return MockServerWebExchange.from(
        MockServerHttpRequest.get("/api/items").header("X-Api-Key", "k"));
  }

  /** Counts down when a request's chain is cancelled, once the cancellation went through it. */
  private record CancelWatch(CountDownLatch cancelled) implements WebFilter, Ordered {
    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
      return chain
          .filter(exchange)
          .doFinally(
              signal -> {
                if (signal == SignalType.CANCEL) {
                  cancelled.countDown();
                }
              });
    }

    @Override
    public int getOrder() {
      return -1;
    }
  }

  /** An in-memory store that answers a non-blocking decision when the test says so. */
  private static final class HeldStore implements CounterStore {
    private final InMemoryCounterStore counts = InMemoryCounterStore.create();
    private final BlockingQueue<Runnable> pending = new LinkedBlockingQueue<>();
    private Runnable next;

    @Override
    public dev.sluice.spi.Counts increment(List<dev.sluice.spi.CounterUpdate> updates) {
      return counts.increment(updates);
    }

    @Override
    public void decrement(List<dev.sluice.spi.CounterUpdate> updates) {
      counts.decrement(updates);
    }

    @Override
    public CompletableFuture<Void> incrementAsync(dev.sluice.spi.CounterBatch batch) {
      CompletableFuture<Void> f = new CompletableFuture<>();
      pending.add(
          () -> {
            counts.increment(batch);
            f.complete(null);
          });
      return f;
    }

    void awaitDecision() throws InterruptedException {
      next = pending.poll(10, TimeUnit.SECONDS);
      assertTrue(next != null, "no decision reached the store");
    }

    void answer() {
      next.run();
    }
  }

  private static int status(WebFluxServer app, String path) {
    try {
      return app.status(get(path, "X-Api-Key: k"));
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static void awaitStarted(AtomicInteger started, int n) {
    assertTrue(
        MemcachedServer.await(Duration.ofSeconds(10), () -> started.get() >= n),
        "the handler never ran");
  }

  /** Waits, with a deadline, until a request to {@code path} is answered {@code expected}. */
  private static void awaitStatus(WebFluxServer app, String path, int expected) {
    boolean seen =
        MemcachedServer.await(Duration.ofSeconds(10), () -> status(app, path) == expected);
    assertTrue(seen, path + " never answered " + expected);
  }

  /** How the server itself reads forwarded headers: Spring Boot's forward-headers strategies. */
  enum Strategy {
    /** It does not. */
    NONE,
    /** Reactor Netty's {@code forwarded(true)}: the request's remote address is what was sent. */
    NATIVE,
    /** Spring's {@code ForwardedHeaderTransformer}, which also removes the headers it read. */
    FRAMEWORK
  }

  /**
   * {@code Forwarded} and {@code X-Forwarded-For} count only from a trusted proxy, whatever the
   * server does with them: an untrusted peer is one client whatever it forwards, and a trusted
   * proxy's clients are each their own.
   */
  @ParameterizedTest
  @EnumSource(Strategy.class)
  void aForwardedForCountsOnlyFromATrustedProxy(Strategy strategy) throws Exception {
    assertEquals(3, passed(strategy, "10.0.0.0/8"), "an untrusted loopback peer is one client");
    assertEquals(10, passed(strategy, "127.0.0.0/8"), "a trusted proxy's clients, each its own");
  }

  /** How many of ten requests, each forwarding another client, pass a limit of 3 per client. */
  private static int passed(Strategy strategy, String trusted) throws Exception {
    Rule perClient =
        Rule.builder("per-client")
            .path("/api/**")
            .key("ip")
            .algorithm(Algorithm.TOKEN_BUCKET)
            .tier(3, Duration.ofHours(1))
            .build();
    RuleSet rules =
        RuleSet.builder()
            .trustedProxies(List.of(trusted))
            .forwardedHeader(ForwardedHeader.X_FORWARDED_FOR)
            .rule(perClient)
            .build();
    WebFilter transformer =
        (exchange, chain) ->
            chain.filter(
                exchange
                    .mutate()
                    .request(new ForwardedHeaderTransformer().apply(exchange.getRequest()))
                    .build());
    try (WebFluxServer app =
        new WebFluxServer(
            RequestLimiter.builder(InMemoryCounterStore.create()).rules(rules).build(),
            hello(),
            strategy == Strategy.FRAMEWORK ? transformer : null,
            server -> server.forwarded(strategy == Strategy.NATIVE))) {
      int passed = 0;
      for (int i = 0; i < 10; i++) {
        int status =
            app.status(
                get(
                    "/api/items",
                    "X-Forwarded-For: 203.0.113." + i,
                    "Forwarded: for=198.51.100." + i));
        passed += status / 100 == 2 ? 1 : 0;
      }
      return passed;
    }
  }

  /** One trick: request {@code i} as raw HTTP/1.1 head lines. */
  private record Trick(String name, IntFunction<List<String>> request) {}

  @Test
  void noPathSpellingOrForgedHeaderGetsPastTheLimit() throws Exception {
    Rule report =
        Rule.builder("report")
            .methods("GET")
            .path("/api/v1/report")
            .key("ip")
            .algorithm(Algorithm.TOKEN_BUCKET)
            .tier(5, Duration.ofHours(1))
            .build();
    Rule lead =
        Rule.builder("lead")
            .methods("POST")
            .path("/api/v1/lead/{id}")
            .key("ip")
            .algorithm(Algorithm.TOKEN_BUCKET)
            .tier(5, Duration.ofHours(1))
            .build();
    RuleSet rules =
        RuleSet.builder()
            .trustedProxies(List.of("127.0.0.1/32"))
            .forwardedHeader(ForwardedHeader.X_FORWARDED_FOR)
            .rule(report)
            .rule(lead)
            .build();
    RouterFunction<ServerResponse> routes =
        RouterFunctions.route()
            .GET("/api/v1/report", r -> ServerResponse.ok().bodyValue("report"))
            .POST(
                "/api/v1/lead/{id}",
                r -> ServerResponse.ok().bodyValue("lead " + r.pathVariable("id")))
            .build();
    List<Trick> tricks = new ArrayList<>();
    for (int n = 0; n < PathSpellings.STRUCTURE.size(); n++) {
      String spelling = PathSpellings.STRUCTURE.get(n);
      String client = "X-Forwarded-For: 198.51.101." + (n + 1);
      tricks.add(
          new Trick(
              "POST /api/v1/lead/" + spelling,
              i ->
                  List.of(
                      "POST /api/v1/lead/" + spelling + " HTTP/1.1", "Content-Length: 0", client)));
    }
    tricks.add(
        new Trick(
            "a new path parameter each time",
            i -> get("/api/v1/report;x=" + i, "X-Forwarded-For: 198.51.100.2")));
    tricks.add(
        new Trick(
            "path parameters on every segment",
            i -> get("/api;a=" + i + "/v1;b/report", "X-Forwarded-For: 198.51.100.4")));
    tricks.add(
        new Trick(
            "percent-encoded letters",
            i -> get("/api/v1/%72eport", "X-Forwarded-For: 198.51.100.5")));
    tricks.add(
        new Trick(
            "a client-sent Forwarded: for=NEW",
            i ->
                get(
                    "/api/v1/report",
                    "Forwarded: for=203.0.113." + i,
                    "X-Forwarded-For: 198.51.100.8")));
    tricks.add(
        new Trick(
            "a forged first X-Forwarded-For hop",
            i -> get("/api/v1/report", "X-Forwarded-For: 203.0.113." + i + ", 198.51.100.9")));
    tricks.add(
        new Trick(
            "IPv4 and IPv4-mapped IPv6 by turns",
            i ->
                get(
                    "/api/v1/report",
                    "X-Forwarded-For: " + (i % 2 == 0 ? "" : "::ffff:") + "198.51.100.10")));
    tricks.add(
        new Trick(
            "a new X-Api-Key each time",
            i ->
                get(
                    "/api/v1/report",
                    "X-Api-Key: invented-" + i,
                    "X-Forwarded-For: 198.51.100.11")));
    List<String> bypasses = new ArrayList<>();
    try (WebFluxServer app =
        new WebFluxServer(
            RequestLimiter.builder(InMemoryCounterStore.create()).rules(rules).build(), routes)) {
      for (Trick t : tricks) {
        int passed = 0;
        for (int i = 0; i < 20; i++) {
          passed += app.status(t.request().apply(i)) / 100 == 2 ? 1 : 0;
        }
        if (passed > 5) {
          bypasses.add(String.format(Locale.ROOT, "%s: %d of 20", t.name(), passed));
        }
      }
    }
    assertEquals(List.of(), bypasses);
  }
}
