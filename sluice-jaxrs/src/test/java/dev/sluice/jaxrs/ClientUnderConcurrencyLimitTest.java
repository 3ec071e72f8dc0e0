package dev.sluice.jaxrs;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.spi.FakeClock;
import dev.sluice.spi.SlowReleaseStore;
import dev.sluice.yaml.YamlRules;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HEAD;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.container.AsyncResponse;
import jakarta.ws.rs.container.Suspended;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.StreamingOutput;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.glassfish.grizzly.http.server.HttpServer;
import org.glassfish.jersey.grizzly2.httpserver.GrizzlyHttpServerFactory;
import org.glassfish.jersey.server.ResourceConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A client that never has more than {@code concurrency} requests in flight is never refused, over
 * real HTTP (Jersey on Grizzly): each of two clients sends its next request the instant it has read
 * the last response, against {@code concurrency: 2}. The store takes 20 ms to give a slot back, so
 * a slot released after the response went out is still held when the next request comes.
 */
class ClientUnderConcurrencyLimitTest {

  private static final long TTL = 30_000;
  private static final ExecutorService ANSWERING = Executors.newCachedThreadPool();
  private static final int CLIENTS = 2;
  private static final int REQUESTS = 30;

  private final FakeClock clock = new FakeClock(1_700_000_000_000L);
  private final SlowReleaseStore store = new SlowReleaseStore(20);
  private HttpServer server;
  private SluiceFeature feature;
  private URI base;

  @Path("/")
  public static class Api {
    @GET
    @Path("text")
    public String text() {
      return "ok";
    }

    @GET
    @Path("empty")
    public void empty() {}

    @GET
    @Path("stream")
    public Response stream() {
      StreamingOutput body =
          out -> {
            byte[] chunk = new byte[16 * 1024];
            for (int i = 0; i < 4; i++) {
              out.write(chunk);
              out.flush();
            }
          };
      return Response.ok(body).build();
    }

    @GET
    @Path("sized")
    public Response sized() {
      StreamingOutput body = out -> out.write(new byte[32 * 1024]);
      return Response.ok(body).header("Content-Length", 32 * 1024).build();
    }

    /** Answered from another thread: Jersey's container sends it as soon as it is written. */
    @GET
    @Path("async")
    public void async(@Suspended AsyncResponse response) {
      ANSWERING.execute(() -> response.resume("ok"));
    }

    @GET
    @Path("async-empty")
    public void asyncEmpty(@Suspended AsyncResponse response) {
      ANSWERING.execute(() -> response.resume(Response.noContent().build()));
    }

    @GET
    @Path("async-stream")
    public CompletionStage<Response> asyncStream() {
      StreamingOutput body =
          out -> {
            byte[] chunk = new byte[16 * 1024];
            for (int i = 0; i < 4; i++) {
              out.write(chunk);
              out.flush();
            }
          };
      return CompletableFuture.supplyAsync(() -> Response.ok(body).build(), ANSWERING);
    }

    @HEAD
    @Path("head")
    public Response head() {
      return Response.ok().header("X-Head", "1").build();
    }
  }

  @BeforeEach
  void start() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    base = URI.create("http://127.0.0.1:" + port + "/");
    feature =
        SluiceFeature.builder(store)
            .clock(clock)
            .rules(
                YamlRules.parse(
                    """
                    rules:
                      - id: in-flight
                        match: { prefix: / }
                        key: [header:X-Api-Key]
                        concurrency: 2
                        slotTtl: 30s
                    """,
                    "in-flight.yaml"))
            .build();
    server =
        GrizzlyHttpServerFactory.createHttpServer(
            base, new ResourceConfig(Api.class).register(feature));
  }

  @AfterEach
  void stop() {
    server.shutdownNow();
    feature.close();
  }

  private long inFlight(String key) {
    long w = clock.millis() / TTL;
    String identity = "header:X-Api-Key=" + key;
    return store.store.count("in-flight", identity, TTL, w)
        + store.store.count("in-flight", identity, TTL, w - 1);
  }

  /** Each client in turn: its next request the instant it has read the last response. */
  private Map<String, Integer> refusals(String path, String method) throws Exception {
    Map<String, Integer> refused = new ConcurrentHashMap<>();
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
                            HttpRequest.newBuilder(base.resolve(path))
                                .method(method, HttpRequest.BodyPublishers.noBody())
                                .header("X-Api-Key", "k")
                                .build(),
                            HttpResponse.BodyHandlers.ofByteArray());
                    if (r.statusCode() == 429) {
                      refused.merge(path, 1, Integer::sum);
                    } else {
                      served.incrementAndGet();
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
    assertEquals(CLIENTS * REQUESTS, served.get() + refused.getOrDefault(path, 0));
    return refused;
  }

  private void neverRefused(String path, String method) throws Exception {
    assertEquals(Map.of(), refusals(path, method), "429s to clients within their limit");
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (inFlight("k") != 0 && System.nanoTime() < deadline) {
      java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
    }
    assertEquals(0, inFlight("k"), "every slot given back");
  }

  @Test
  void aTextResponse() throws Exception {
    neverRefused("text", "GET");
  }

  @Test
  void aResponseWithoutEntity() throws Exception {
    neverRefused("empty", "GET");
  }

  @Test
  void aStreamedResponse() throws Exception {
    neverRefused("stream", "GET");
  }

  @Test
  void aStreamedResponseOfDeclaredLength() throws Exception {
    neverRefused("sized", "GET");
  }

  @Test
  void anAsyncResponse() throws Exception {
    neverRefused("async", "GET");
  }

  @Test
  void anAsyncResponseWithoutEntity() throws Exception {
    neverRefused("async-empty", "GET");
  }

  @Test
  void anAsyncStreamedResponse() throws Exception {
    neverRefused("async-stream", "GET");
  }

  @Test
  void aHeadResponse() throws Exception {
    neverRefused("head", "HEAD");
  }
}
