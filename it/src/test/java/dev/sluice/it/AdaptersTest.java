package dev.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.http.QuotaResolver;
import dev.sluice.http.RequestLimiter;
import dev.sluice.jaxrs.RateLimited;
import dev.sluice.jaxrs.SluiceFeature;
import dev.sluice.servlet.SluiceFilter;
import dev.sluice.spi.FakeClock;
import dev.sluice.store.inmemory.InMemoryCounterStore;
import dev.sluice.testkit.MemcachedServer;
import dev.sluice.yaml.YamlRules;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.glassfish.grizzly.http.server.HttpServer;
import org.glassfish.grizzly.servlet.FilterRegistration;
import org.glassfish.grizzly.servlet.WebappContext;
import org.glassfish.jersey.server.ResourceConfig;
import org.glassfish.jersey.servlet.ServletContainer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Both adapters in one real servlet container (Grizzly), as an application deploys them: Jersey
 * behind a non-root servlet mapping ({@code /app} context, {@code /v1/*} servlet) and the servlet
 * filter in front of a plain servlet, with the same rules file. Requests go over raw sockets, so no
 * client tidies a path spelling before the container sees it.
 */
class AdaptersTest {

  static final String RULES =
      """
      trustedProxies: [127.0.0.1/32]
      rules:
        - id: hello
          match: { methods: [GET], path: /v1/api/hello }
          key: [ip]
          algorithm: fixed-window
          tiers: [ { limit: 3, period: 1h } ]
        - id: strict
          match: { methods: [GET], path: /v1/api/strict }
          key: [ip]
          algorithm: fixed-window
          onStoreFailure: reject
          tiers: [ { limit: 3, period: 1h } ]
      """;

  @Path("/")
  @Produces("application/json")
  public static class Api {
    @GET
    @Path("api/hello")
    public String hello() {
      return "{}";
    }

    @GET
    @Path("api/strict")
    public String strict() {
      return "{}";
    }

    @GET
    @Path("files/{p: .+}")
    @RateLimited(limit = 2, period = "1h", key = "ip", id = "files")
    public String files() {
      return "{}";
    }
  }

  private final List<HttpServer> servers = new ArrayList<>();
  private final FakeClock clock = new FakeClock();

  @AfterEach
  void stop() {
    servers.forEach(HttpServer::shutdownNow);
  }

  private int serve(WebappContext app) throws IOException {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    HttpServer server = HttpServer.createSimpleServer(null, "127.0.0.1", port);
    app.deploy(server);
    server.start();
    servers.add(server);
    return port;
  }

  /** Jersey at /app/v1/* with the feature; {@code quotas} lets a test make the limiter throw. */
  private int jersey(QuotaResolver quotas) throws IOException {
    return jersey(quotas, ServletContainer::new);
  }

  /** As {@link #jersey(QuotaResolver)}, hosted by the servlet {@code container} makes. */
  private int jersey(
      QuotaResolver quotas, java.util.function.Function<ResourceConfig, ServletContainer> container)
      throws IOException {
    SluiceFeature feature =
        SluiceFeature.builder(InMemoryCounterStore.create())
            .clock(clock)
            .quotaResolver(quotas)
            .rules(YamlRules.parse(RULES, "rules.yaml"))
            .build();
    WebappContext app = new WebappContext("jersey", "/app");
    app.addServlet(
            "jersey",
            container.apply(
                new ResourceConfig(Api.class)
                    .register(feature)
                    .property("jersey.config.server.wadl.disableWadl", true)))
        .addMapping("/v1/*");
    return serve(app);
  }

  /** A plain servlet at /app/v1/* behind the servlet filter. */
  private int servlet(QuotaResolver quotas) throws IOException {
    RequestLimiter limiter =
        RequestLimiter.builder(InMemoryCounterStore.create())
            .clock(clock)
            .quotaResolver(quotas)
            .rules(YamlRules.parse(RULES, "rules.yaml"))
            .build();
    WebappContext app = new WebappContext("servlet", "/app");
    app.addServlet("api", new Ok()).addMapping("/v1/*");
    app.addFilter("sluice", new SluiceFilter(limiter)).addMappingForUrlPatterns(null, "/*");
    return serve(app);
  }

  public static final class Ok extends HttpServlet {
    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse res) throws IOException {
      String path = req.getPathInfo();
      if (path == null || !(path.equals("/api/hello") || path.equals("/api/strict"))) {
        res.sendError(404);
        return;
      }
      res.setContentType("application/json");
      res.getWriter().write("{}");
    }
  }

  /** The status of one request sent as written, from {@code client} through the trusted proxy. */
  static int raw(int port, String method, String path, String client) throws IOException {
    return RawHttp.status(
        port, List.of(method + " " + path + " HTTP/1.1", "X-Forwarded-For: " + client));
  }

  /**
   * Spellings of /v1/api/hello, each with the status its first three requests get from Jersey
   * (behind the servlet mapping) and from the plain servlet: 200 where the container routes it to
   * the resource, 404 where it does not. The rule counts it either way, so the fourth request, in
   * the plain spelling, is the client's 429; except a dot segment through Jersey ({@link
   * #DATA_FOR_JERSEY}), which Jersey routes as data and so does the feature: no resource, no count.
   */
  static final Map<String, List<Integer>> SPELLINGS = new java.util.LinkedHashMap<>();

  static {
    SPELLINGS.put("/app/v1/api/hello", List.of(200, 200));
    SPELLINGS.put("/app/v1/api/hello;x=1", List.of(200, 200));
    SPELLINGS.put("/app/v1/api/hello;x=2", List.of(200, 200));
    SPELLINGS.put("/app/v1/api/hello;jsessionid=0123", List.of(200, 200));
    SPELLINGS.put("/app/v1;a=b/api;c=d/hello", List.of(404, 404));
    SPELLINGS.put("/app/v1/api/%68ello", List.of(404, 200));
    SPELLINGS.put("/app/v1/api/./hello", List.of(404, 200));
    SPELLINGS.put("/app/v1/api/x/../hello", List.of(404, 200));
    SPELLINGS.put("/app/v1//api/hello", List.of(404, 200));
  }

  static final java.util.Set<String> DATA_FOR_JERSEY =
      java.util.Set.of("/app/v1/api/./hello", "/app/v1/api/x/../hello");

  private static List<Integer> spell(int port, String method, String spelling, String client)
      throws IOException {
    List<Integer> statuses = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      statuses.add(raw(port, method, spelling, client));
    }
    statuses.add(raw(port, "GET", "/app/v1/api/hello", client));
    statuses.add(raw(port, method, spelling, client));
    return statuses;
  }

  /**
   * Dropwizard (and others) host Jersey in their own subclass of its {@code ServletContainer}: the
   * feature still finds the client's address there, and a rule keyed on it limits.
   */
  @Test
  void aSubclassOfJerseysServletContainerIsAServletContainer() throws Exception {
    int port =
        jersey(
            QuotaResolver.NONE,
            rc ->
                new ServletContainer(rc) {
                  private static final long serialVersionUID = 1L;
                });
    for (int i = 0; i < 3; i++) {
      assertEquals(200, raw(port, "GET", "/app/v1/api/hello", "198.51.100.200"));
    }
    assertEquals(429, raw(port, "GET", "/app/v1/api/hello", "198.51.100.200"), "keyed on ip");
    assertEquals(200, raw(port, "GET", "/app/v1/api/hello", "198.51.100.201"), "another client");
  }

  @Test
  void everySpellingOfAPathAndHeadAreCountedInBothAdapters() throws Exception {
    int[] ports = {jersey(QuotaResolver.NONE), servlet(QuotaResolver.NONE)};
    for (int a = 0; a < ports.length; a++) {
      int port = ports[a];
      int client = 0;
      for (Map.Entry<String, List<Integer>> e : SPELLINGS.entrySet()) {
        String ip = "198.51.100." + ++client;
        int routed = e.getValue().get(a);
        boolean counted = a != 0 || !DATA_FOR_JERSEY.contains(e.getKey());
        assertEquals(
            counted ? List.of(routed, routed, routed, 429, 429) : List.of(404, 404, 404, 200, 404),
            spell(port, "GET", e.getKey(), ip),
            e.getKey() + (a == 0 ? " through Jersey" : " through the servlet filter"));
      }
      assertEquals(
          List.of(200, 200, 200, 429, 429),
          spell(port, "HEAD", "/app/v1/api/hello", "198.51.100.99"),
          "HEAD is GET without a body");
    }
  }

  @Test
  void bothAdaptersMatchTheSamePathBelowTheContext() throws Exception {
    for (int port : new int[] {jersey(QuotaResolver.NONE), servlet(QuotaResolver.NONE)}) {
      for (int i = 0; i < 3; i++) {
        assertEquals(200, raw(port, "GET", "/app/v1/api/hello", "203.0.113.1"));
      }
      assertEquals(
          429,
          raw(port, "GET", "/app/v1/api/hello", "203.0.113.1"),
          "the rule /v1/api/hello applies on " + port);
    }
  }

  @Test
  void aTemplateWhoseRegexSpansSlashesIsLimitedOnEveryPathItServes() throws Exception {
    int port = jersey(QuotaResolver.NONE);
    assertEquals(200, raw(port, "GET", "/app/v1/files/a/b/c", "203.0.113.2"));
    assertEquals(200, raw(port, "HEAD", "/app/v1/files/d", "203.0.113.2"));
    assertEquals(429, raw(port, "GET", "/app/v1/files/e/f", "203.0.113.2"));
    assertEquals(429, raw(port, "GET", "/app/v1/files/x;y=z", "203.0.113.2"));
  }

  @Test
  void anExceptionInTheLimiterFailsOpenOrAnswers503NeverA500() throws Exception {
    QuotaResolver broken =
        (request, rule) -> {
          throw new IllegalStateException("resolver bug");
        };
    for (int port : new int[] {jersey(broken), servlet(broken)}) {
      for (int i = 0; i < 5; i++) {
        assertEquals(
            200, raw(port, "GET", "/app/v1/api/hello", "203.0.113.3"), "fails open on " + port);
        assertEquals(
            503,
            raw(port, "GET", "/app/v1/api/strict", "203.0.113.3"),
            "fails closed where asked on " + port);
      }
    }
  }

  @Test
  void theServletFilterMakesAMemcachedStoreFromItsInitParametersAndClosesIt() throws Exception {
    try (MemcachedServer memcached = MemcachedServer.start()) {
      java.nio.file.Path rules = Files.createTempFile("rules", ".yaml");
      Files.writeString(rules, RULES.replace("fixed-window", "sliding-window"));
      WebappContext app = new WebappContext("servlet", "/app");
      app.addServlet("api", new Ok()).addMapping("/v1/*");
      FilterRegistration f = app.addFilter("sluice", SluiceFilter.class);
      f.setInitParameters(
          Map.of(
              "rules",
              rules.toString(),
              "store",
              "memcached",
              "store.servers",
              memcached.address(),
              "store.prefix",
              "initparams",
              "store.operationTimeout",
              "2s"));
      f.addMappingForUrlPatterns(null, "/*");
      int port = serve(app);
      for (int i = 0; i < 3; i++) {
        assertEquals(200, raw(port, "GET", "/app/v1/api/hello", "203.0.113.4"));
      }
      assertEquals(429, raw(port, "GET", "/app/v1/api/hello", "203.0.113.4"));
      assertTrue(
          memcached.stat("incr_hits") >= 3 && memcached.stat("curr_items") >= 1,
          "counted in memcached");
      long connections = memcached.stat("curr_connections");
      app.undeploy();
      assertTrue(
          MemcachedServer.await(
              java.time.Duration.ofSeconds(10),
              () -> memcached.stat("curr_connections") < connections),
          "destroy() closed the store it made");
      Files.deleteIfExists(rules);
    }
  }
}
