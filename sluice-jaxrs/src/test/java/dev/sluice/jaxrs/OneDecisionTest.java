package dev.sluice.jaxrs;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.spi.FakeClock;
import dev.sluice.spi.ReferenceCounterStore;
import dev.sluice.yaml.YamlRules;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import org.glassfish.grizzly.http.server.HttpServer;
import org.glassfish.jersey.grizzly2.httpserver.GrizzlyHttpServerFactory;
import org.glassfish.jersey.server.ResourceConfig;

/**
 * A request refused by any of its rules, the rules file's or a resource's {@link RateLimited},
 * takes nothing from the others, over real HTTP (Jersey on Grizzly): generated limits of the rules
 * file's rule and generated sequences of requests to methods with annotations of limit 1, 2 and 4,
 * to a method without any and to a path no method serves, against a model that counts a request
 * against every rule that applies to it only when all of them admit it.
 */
class OneDecisionTest {

  private static final long HOUR = 3_600_000;
  private static final Map<String, Long> ANNOTATED = Map.of("one", 1L, "two", 2L, "four", 4L);
  private static final List<String> ROUTES = List.of("one", "two", "four", "plain", "missing");

  private static final FakeClock clock = new FakeClock(1_700_000_000_000L);
  private static final AtomicInteger clients = new AtomicInteger();
  private static ReferenceCounterStore store;
  private static SluiceFeature feature;
  private static HttpServer server;
  private static URI base;
  private static final HttpClient http =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @Path("/")
  public static class Api {
    @GET
    @Path("one")
    @RateLimited(limit = 1, period = "1h", key = "header:X-Client", id = "one")
    public String one() {
      return "{}";
    }

    @GET
    @Path("two")
    @RateLimited(limit = 2, period = "1h", key = "header:X-Client", id = "two")
    public String two() {
      return "{}";
    }

    @GET
    @Path("four")
    @RateLimited(limit = 4, period = "1h", key = "header:X-Client", id = "four")
    public String four() {
      return "{}";
    }

    @GET
    @Path("plain")
    public String plain() {
      return "{}";
    }
  }

  @BeforeContainer
  static void start() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    base = URI.create("http://127.0.0.1:" + port + "/");
    store = new ReferenceCounterStore();
    feature = SluiceFeature.builder(store).clock(clock).rules(fileRule(3)).build();
    server =
        GrizzlyHttpServerFactory.createHttpServer(
            base, new ResourceConfig(Api.class).register(feature));
  }

  @AfterContainer
  static void stop() {
    server.shutdownNow();
    feature.close();
  }

  private static dev.sluice.http.RuleSet fileRule(long limit) {
    return YamlRules.parse(
        """
        rules:
          - id: file
            match: { prefix: / }
            key: [header:X-Client]
            tiers: [ { limit: %d, period: 1h } ]
        """
            .formatted(limit),
        "file.yaml");
  }

  @Provide
  Arbitrary<List<String>> requests() {
    return Arbitraries.of(ROUTES).list().ofMinSize(1).ofMaxSize(16);
  }

  @Property(tries = 60)
  void aRefusalByAnyRuleTakesNothingFromTheOthers(
      @ForAll @IntRange(min = 1, max = 8) int fileLimit, @ForAll("requests") List<String> requests)
      throws Exception {
    feature.limiter().update(fileRule(fileLimit));
    String client = "c" + clients.incrementAndGet();
    Map<String, Long> counted = new HashMap<>();
    List<String> expected = new ArrayList<>();
    List<String> got = new ArrayList<>();
    for (String route : requests) {
      List<String> rules = new ArrayList<>(List.of("file"));
      if (ANNOTATED.containsKey(route)) {
        rules.add(route);
      }
      boolean admitted =
          rules.stream()
              .allMatch(
                  r ->
                      counted.getOrDefault(r, 0L)
                          < (r.equals("file") ? (long) fileLimit : ANNOTATED.get(r)));
      if (admitted) {
        rules.forEach(r -> counted.merge(r, 1L, Long::sum));
      }
      expected.add(route + " " + (admitted ? (route.equals("missing") ? 404 : 200) : 429));
      HttpResponse<String> r =
          http.send(
              HttpRequest.newBuilder(base.resolve(route)).header("X-Client", client).build(),
              HttpResponse.BodyHandlers.ofString());
      got.add(route + " " + r.statusCode());
    }
    assertEquals(expected, got, "statuses, file limit " + fileLimit);
    long window = clock.millis() / HOUR;
    for (String rule : List.of("file", "one", "two", "four")) {
      assertEquals(
          (long) counted.getOrDefault(rule, 0L),
          store.count(rule, "header:X-Client=" + client, HOUR, window),
          "what rule " + rule + " counted, file limit " + fileLimit + ", " + got);
    }
  }
}
