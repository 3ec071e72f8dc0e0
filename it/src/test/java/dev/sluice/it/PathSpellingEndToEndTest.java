package dev.sluice.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.http.PathSpellings;
import dev.sluice.http.RequestLimiter;
import dev.sluice.jaxrs.SluiceFeature;
import dev.sluice.servlet.SluiceFilter;
import dev.sluice.spi.FakeClock;
import dev.sluice.spi.RecordingStore;
import dev.sluice.yaml.YamlRules;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URI;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import org.apache.catalina.Context;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.ContextHandlerCollection;
import org.glassfish.grizzly.http.server.HttpServer;
import org.glassfish.jersey.grizzly2.httpserver.GrizzlyHttpServerFactory;
import org.glassfish.jersey.server.ResourceConfig;
import org.glassfish.jersey.servlet.ServletContainer;

/**
 * Differential test of the path a rule matches against the path a real container routes. Spellings
 * of three real routes are generated (any character of a value percent-encoded in either hex case,
 * double encoding, dot segments raw and encoded, empty segments, path parameters, trailing slashes,
 * letter case; and the context path spelled as a container still routes it: {@code //ctx}, {@code
 * /%63tx}, {@code /./ctx}, {@code /x/../ctx}, {@code /ctx;x=1}) and each is sent, over a raw
 * socket, to seven deployments, each servlet deployment under a context path of its own:
 *
 * <ul>
 *   <li>{@code grizzly}: Jersey on Grizzly with {@link SluiceFeature};
 *   <li>{@code tomcat-jersey}: Jersey under a servlet mapping ({@code /api/*}) on Tomcat with
 *       {@link SluiceFeature};
 *   <li>{@code tomcat-filter-jersey}: the same Jersey servlet behind {@link SluiceFilter};
 *   <li>{@code tomcat-filter-servlet}: a plain servlet routing on the container's path, behind
 *       {@link SluiceFilter};
 *   <li>{@code jetty-jersey}, {@code jetty-filter-jersey}, {@code jetty-filter-servlet}: the same
 *       three on Jetty 12's ee10 servlet layer.
 * </ul>
 *
 * The resources echo the route and the values they received. The property: whenever a resource was
 * served, every rule that covers its route counted the request, under the identity the resource
 * received. The rules' limits are never reached, so the test sees counting, not refusals.
 */
class PathSpellingEndToEndTest {

  private static final String RULES =
      """
      defaults: { algorithm: fixed-window }
      rules:
        - id: lead
          match: { methods: [POST], path: "/api/v1/lead/{id}" }
          key: [path:id]
          tiers: [ { limit: 100000000, period: 1h } ]
        - id: any-v1
          match: { path: "/api/v1/*/{id}" }
          key: [path:id]
          tiers: [ { limit: 100000000, period: 1h } ]
        - id: api
          match: { prefix: /api }
          key: [ip]
          tiers: [ { limit: 100000000, period: 1h } ]
        - id: api-glob
          match: { path: "/api/**" }
          key: [ip]
          tiers: [ { limit: 100000000, period: 1h } ]
        - id: product
          match: { methods: [GET], path: "/api/v1/organizations/{orgId}/product/*" }
          key: [path:orgId]
          tiers: [ { limit: 100000000, period: 1h } ]
        - id: product-deep
          match: { path: "/**/product/{pid}" }
          key: [path:pid]
          tiers: [ { limit: 100000000, period: 1h } ]
        - id: report
          match: { methods: [GET], path: /api/v1/report }
          key: [ip]
          tiers: [ { limit: 100000000, period: 1h } ]
      """;

  private static final String IP = "ip=127.0.0.1";

  /** A route of the API: its method, its path template below /api, and its captures. */
  enum Route {
    LEAD("POST", "v1/lead/{id}"),
    PRODUCT("GET", "v1/organizations/{orgId}/product/{pid}"),
    REPORT("GET", "v1/report");

    final String method;
    final String template;

    Route(String method, String template) {
      this.method = method;
      this.template = template;
    }

    /** What every rule covering this route counts a request to it under, by its values. */
    Set<String> expected(List<String> values) {
      Set<String> out = new LinkedHashSet<>(List.of("api:" + IP, "api-glob:" + IP));
      switch (this) {
        case LEAD -> {
          out.add("lead:path:id=" + values.get(0));
          out.add("any-v1:path:id=" + values.get(0));
        }
        case PRODUCT -> {
          out.add("product:path:orgId=" + values.get(0));
          out.add("product-deep:path:pid=" + values.get(1));
        }
        case REPORT -> out.add("report:" + IP);
      }
      return out;
    }

    int captures() {
      return (int) template.chars().filter(c -> c == '{').count();
    }
  }

  /** The routes as JAX-RS resources; each answers its route and values, URL-encoded. */
  public abstract static class Routes {
    @POST
    @Path("v1/lead/{id}")
    public String lead(@PathParam("id") String id) {
      return echo(Route.LEAD, id);
    }

    @GET
    @Path("v1/organizations/{orgId}/product/{pid}")
    public String product(@PathParam("orgId") String orgId, @PathParam("pid") String pid) {
      return echo(Route.PRODUCT, orgId, pid);
    }

    @GET
    @Path("v1/report")
    public String report() {
      return echo(Route.REPORT);
    }
  }

  /** The routes at /api, for Jersey on its own server. */
  @Path("api")
  public static class AtApi extends Routes {}

  /** The routes at the root, for Jersey under the servlet mapping /api/*. */
  @Path("/")
  public static class AtRoot extends Routes {}

  /** The routes as a servlet at /api/* routes them: on the container's decoded, resolved path. */
  public static final class Plain extends HttpServlet {
    @Override
    protected void service(HttpServletRequest req, HttpServletResponse res) throws IOException {
      String info = req.getPathInfo() == null ? "" : req.getPathInfo();
      List<String> segs = new ArrayList<>();
      for (String s : info.split("/", -1)) {
        if (!s.isEmpty()) {
          segs.add(s);
        }
      }
      for (Route r : Route.values()) {
        String[] t = r.template.split("/", -1);
        if (!r.method.equals(req.getMethod()) || t.length != segs.size()) {
          continue;
        }
        List<String> values = new ArrayList<>();
        boolean match = true;
        for (int i = 0; i < t.length && match; i++) {
          if (t[i].startsWith("{")) {
            values.add(segs.get(i));
          } else {
            match = t[i].equals(segs.get(i));
          }
        }
        if (match) {
          res.getWriter().write(echo(r, values.toArray(new String[0])));
          return;
        }
      }
      res.sendError(404);
    }
  }

  static String echo(Route r, String... values) {
    StringBuilder b = new StringBuilder("route=").append(r.name());
    for (String v : values) {
      b.append(' ').append(URLEncoder.encode(v, StandardCharsets.UTF_8));
    }
    return b.toString();
  }

  /** A deployment under test: where to send, and what its limiter counted. */
  record Target(String name, int port, String prefix, RecordingStore store) {}

  private static final List<Target> TARGETS = new ArrayList<>();
  private static HttpServer grizzly;
  private static Tomcat tomcat;
  private static Server jetty;
  private static final Map<String, AtomicInteger> SERVED = new TreeMap<>();
  private static final Map<String, AtomicInteger> SENT = new TreeMap<>();

  @BeforeContainer
  static void start() throws Exception {
    FakeClock clock = new FakeClock();
    RecordingStore g = new RecordingStore();
    int gport;
    try (java.net.ServerSocket free = new java.net.ServerSocket(0)) {
      gport = free.getLocalPort();
    }
    grizzly =
        GrizzlyHttpServerFactory.createHttpServer(
            URI.create("http://127.0.0.1:" + gport + "/"),
            new ResourceConfig(AtApi.class)
                .register(feature(g, clock))
                .property("jersey.config.server.wadl.disableWadl", true));
    TARGETS.add(new Target("grizzly", gport, "", g));

    tomcat = new Tomcat();
    tomcat.setBaseDir(Files.createTempDirectory("tomcat").toString());
    tomcat.setPort(0);
    tomcat.getConnector();
    RecordingStore tj = new RecordingStore();
    Context jersey = tomcat.addContext("/tj", null);
    Tomcat.addServlet(
        jersey,
        "jersey",
        new ServletContainer(
            new ResourceConfig(AtRoot.class)
                .register(feature(tj, clock))
                .property("jersey.config.server.wadl.disableWadl", true)));
    jersey.addServletMappingDecoded("/api/*", "jersey");

    RecordingStore fj = new RecordingStore();
    Context filterJersey = tomcat.addContext("/fj", null);
    Tomcat.addServlet(
        filterJersey,
        "jersey",
        new ServletContainer(
            new ResourceConfig(AtRoot.class)
                .property("jersey.config.server.wadl.disableWadl", true)));
    filterJersey.addServletMappingDecoded("/api/*", "jersey");
    filter(filterJersey, fj, clock);

    RecordingStore fs = new RecordingStore();
    Context filterServlet = tomcat.addContext("/fs", null);
    Tomcat.addServlet(filterServlet, "plain", new Plain());
    filterServlet.addServletMappingDecoded("/api/*", "plain");
    filter(filterServlet, fs, clock);

    tomcat.start();
    int tport = tomcat.getConnector().getLocalPort();
    TARGETS.add(new Target("tomcat-jersey", tport, "/tj", tj));
    TARGETS.add(new Target("tomcat-filter-jersey", tport, "/fj", fj));
    TARGETS.add(new Target("tomcat-filter-servlet", tport, "/fs", fs));

    jetty = new Server();
    ServerConnector connector = new ServerConnector(jetty);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    jetty.addConnector(connector);
    ContextHandlerCollection contexts = new ContextHandlerCollection();
    RecordingStore jt = new RecordingStore();
    ServletContextHandler jettyJersey = new ServletContextHandler("/jt");
    jettyJersey.addServlet(
        new ServletHolder(
            new ServletContainer(
                new ResourceConfig(AtRoot.class)
                    .register(feature(jt, clock))
                    .property("jersey.config.server.wadl.disableWadl", true))),
        "/api/*");
    contexts.addHandler(jettyJersey);
    RecordingStore jj = new RecordingStore();
    ServletContextHandler jettyFilterJersey = new ServletContextHandler("/jj");
    jettyFilterJersey.addServlet(
        new ServletHolder(
            new ServletContainer(
                new ResourceConfig(AtRoot.class)
                    .property("jersey.config.server.wadl.disableWadl", true))),
        "/api/*");
    jettyFilterJersey.addFilter(
        new FilterHolder(new SluiceFilter(limiter(jj, clock))),
        "/*",
        EnumSet.of(DispatcherType.REQUEST));
    contexts.addHandler(jettyFilterJersey);
    RecordingStore js = new RecordingStore();
    ServletContextHandler jettyFilterServlet = new ServletContextHandler("/js");
    jettyFilterServlet.addServlet(new ServletHolder(new Plain()), "/api/*");
    jettyFilterServlet.addFilter(
        new FilterHolder(new SluiceFilter(limiter(js, clock))),
        "/*",
        EnumSet.of(DispatcherType.REQUEST));
    contexts.addHandler(jettyFilterServlet);
    jetty.setHandler(contexts);
    jetty.start();
    int jport = connector.getLocalPort();
    TARGETS.add(new Target("jetty-jersey", jport, "/jt", jt));
    TARGETS.add(new Target("jetty-filter-jersey", jport, "/jj", jj));
    TARGETS.add(new Target("jetty-filter-servlet", jport, "/js", js));
  }

  private static SluiceFeature feature(RecordingStore store, FakeClock clock) {
    return SluiceFeature.builder(store)
        .clock(clock)
        .rules(YamlRules.parse(RULES, "rules.yaml"))
        .build();
  }

  private static RequestLimiter limiter(RecordingStore store, FakeClock clock) {
    return RequestLimiter.builder(store)
        .clock(clock)
        .rules(YamlRules.parse(RULES, "rules.yaml"))
        .build();
  }

  private static void filter(Context ctx, RecordingStore store, FakeClock clock) {
    FilterDef def = new FilterDef();
    def.setFilterName("sluice");
    def.setFilter(new SluiceFilter(limiter(store, clock)));
    ctx.addFilterDef(def);
    FilterMap map = new FilterMap();
    map.setFilterName("sluice");
    map.addURLPattern("/*");
    ctx.addFilterMap(map);
  }

  @AfterContainer
  static void stop() throws Exception {
    Report.line("path spellings sent to each deployment, and how many its resource served:");
    Report.line("| deployment | sent | served | served but not counted as the route |");
    Report.line("|---|---:|---:|---:|");
    for (Target t : TARGETS) {
      Report.line(
          String.format(
              Locale.ROOT,
              "| %s | %d | %d | 0 |",
              t.name(),
              SENT.getOrDefault(t.name(), new AtomicInteger()).get(),
              SERVED.getOrDefault(t.name(), new AtomicInteger()).get()));
    }
    if (grizzly != null) {
      grizzly.shutdownNow();
    }
    if (tomcat != null) {
      tomcat.stop();
      tomcat.destroy();
    }
    if (jetty != null) {
      jetty.stop();
    }
    TARGETS.clear();
  }

  // ---------------------------------------------------------------------------------------------
  // Generated spellings

  private static final String ALPHABET = "ab0/;.%=+ ~é";

  private static Arbitrary<String> value() {
    Arbitrary<String> any =
        Arbitraries.of(ALPHABET.codePoints().mapToObj(Character::toString).toList())
            .list()
            .ofMinSize(1)
            .ofMaxSize(5)
            .map(l -> String.join("", l));
    return Arbitraries.frequencyOf(
        Tuple.of(4, any),
        Tuple.of(2, Arbitraries.of("42", "acme", "victim", "x1")),
        Tuple.of(
            2, Arbitraries.of(".", "..", "../../..", "x1/../victim", "%41", ";", ";x", "../")));
  }

  /**
   * One request: a route, its values, the raw path a client spelled them as, and how it spelled the
   * context path (an index into {@link #CONTEXT_SPELLINGS}).
   */
  record Spelled(Route route, List<String> values, String raw, int context) {
    @Override
    public String toString() {
      return route.method
          + " "
          + spellContext("/ctx", context)
          + raw
          + " (values "
          + values
          + ", the context spelled "
          + CONTEXT_SPELLINGS.get(context)
          + ")";
    }
  }

  /**
   * Spellings of a context path {@code /ctx} that a container may still route to it: {@code {c}}
   * stands for {@code ctx}, {@code {1}} for it with its first letter percent-encoded, {@code {2}}
   * with its second.
   */
  static final List<String> CONTEXT_SPELLINGS =
      List.of(
          "/{c}",
          "//{c}",
          "/{1}",
          "/{2}",
          "/./{c}",
          "/x/../{c}",
          "/%2e/{c}",
          "/{c};x=1",
          "/{c}/.",
          "/{c}/x/..",
          "/%2E%2E/{c}",
          "/{c}/%2e",
          "///{c}");

  /** {@code prefix} (a context path, or empty for none) spelled as {@code CONTEXT_SPELLINGS[i]}. */
  static String spellContext(String prefix, int i) {
    if (prefix.isEmpty()) {
      return prefix;
    }
    String name = prefix.substring(1);
    String first = String.format(Locale.ROOT, "%%%02x", (int) name.charAt(0)) + name.substring(1);
    String second =
        name.charAt(0)
            + String.format(Locale.ROOT, "%%%02X", (int) name.charAt(1))
            + name.substring(2);
    return CONTEXT_SPELLINGS
        .get(i)
        .replace("{1}", first)
        .replace("{2}", second)
        .replace("{c}", name);
  }

  @Provide
  Arbitrary<Spelled> spellings() {
    return Combinators.combine(
            Arbitraries.of(Route.class),
            value().list().ofSize(2),
            Arbitraries.longs(),
            Arbitraries.frequencyOf(
                Tuple.of(CONTEXT_SPELLINGS.size(), Arbitraries.just(0)),
                Tuple.of(
                    CONTEXT_SPELLINGS.size(),
                    Arbitraries.integers().between(1, CONTEXT_SPELLINGS.size() - 1))))
        .as(
            (route, values, seed, context) -> {
              List<String> v = values.subList(0, route.captures());
              return new Spelled(route, v, spell(route, v, new Random(seed)), context);
            });
  }

  /** Spells "/api/" + the route's template filled with {@code values}, as a client may. */
  static String spell(Route route, List<String> values, Random r) {
    List<String> segments = new ArrayList<>();
    List<Boolean> literals = new ArrayList<>();
    segments.add("api");
    literals.add(true);
    int next = 0;
    for (String t : route.template.split("/", -1)) {
      boolean literal = !t.startsWith("{");
      segments.add(literal ? t : values.get(next++));
      literals.add(literal);
    }
    // Half the spellings touch only the values, as Jersey routes a literal segment only when it
    // is spelled as written; the other half may spell anything.
    boolean anything = r.nextBoolean();
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < segments.size(); i++) {
      boolean literal = literals.get(i);
      if (literal && !anything) {
        b.append('/').append(segments.get(i));
        continue;
      }
      // Dot segments and detours before a segment: a servlet container resolves them away.
      if (r.nextInt(6) == 0) {
        b.append('/').append(List.of(".", "%2e", "%2E").get(r.nextInt(3)));
      }
      if (r.nextInt(8) == 0) {
        b.append("/x/").append(List.of("..", "%2e%2e", ".%2E", "%2e.").get(r.nextInt(4)));
      }
      b.append(r.nextInt(10) == 0 ? "//" : "/");
      String seg = segments.get(i);
      if (literal && r.nextInt(20) == 0) {
        seg = seg.toUpperCase(Locale.ROOT);
      }
      b.append(PathSpellings.encode(seg, r, 6));
      if (r.nextInt(6) == 0) {
        b.append(List.of(";", ";x=1", ";jsessionid=AB12", ";a=%2F..").get(r.nextInt(4)));
      }
    }
    if (r.nextInt(3) == 0) {
      b.append(anything ? List.of("/", "/.", "/x/..", "/%2e").get(r.nextInt(4)) : "/");
    }
    return b.toString();
  }

  @Property(tries = 1_000)
  void aServedRequestIsCountedByEveryRuleOfItsRoute(@ForAll("spellings") Spelled s)
      throws IOException {
    List<String> failures = check(s.route().method, s.raw(), s.context());
    assertTrue(failures.isEmpty(), s + ": " + failures);
  }

  /**
   * The spellings that reached a route on Jersey while no rule counted them, or charged another
   * tenant: each once per deployment.
   */
  @Example
  void eachKnownBypassSpellingIsCountedWhereverItIsServed() throws IOException {
    List<String> failures = new ArrayList<>();
    for (String id : PathSpellings.STRUCTURE) {
      failures.addAll(check("POST", "/api/v1/lead/" + id, 0));
    }
    failures.addAll(check("POST", "/api/v1/lead/x1%2F..%2Fvictim", 0));
    for (String pid : List.of("%2e%2e", "%3B1", "1%2F..")) {
      failures.addAll(check("GET", "/api/v1/organizations/acme/product/" + pid, 0));
    }
    failures.addAll(check("GET", "/api/v1/organizations/x1%2F..%2Fvictim/product/1", 0));
    assertTrue(failures.isEmpty(), String.join("\n", failures));
  }

  /**
   * The context spellings that Tomcat ({@code //app}) and Jetty ({@code /%61pp}, {@code /a%70p},
   * {@code /./app}, {@code /x/../app}) served to a servlet under {@code /app} while the servlet
   * filter counted nothing: each on every deployment, and each is served somewhere.
   */
  @Example
  void eachContextSpellingIsCountedWhereverItIsServed() throws IOException {
    List<String> failures = new ArrayList<>();
    for (int i = 0; i < CONTEXT_SPELLINGS.size(); i++) {
      int served = SERVED.values().stream().mapToInt(AtomicInteger::get).sum();
      failures.addAll(check("POST", "/api/v1/lead/x1", i));
      failures.addAll(check("GET", "/api/v1/organizations/acme/product/7", i));
      if (SERVED.values().stream().mapToInt(AtomicInteger::get).sum() == served) {
        failures.add("no deployment served the context spelled " + CONTEXT_SPELLINGS.get(i));
      }
    }
    assertTrue(failures.isEmpty(), String.join("\n", failures));
  }

  /**
   * Sends the request to every deployment, its context path spelled as {@code
   * CONTEXT_SPELLINGS[context]}; what was served and not counted as its route.
   */
  private static List<String> check(String method, String raw, int context) throws IOException {
    List<String> failures = new ArrayList<>();
    for (Target t : TARGETS) {
      t.store().take();
      String target = spellContext(t.prefix(), context) + raw;
      String body = send(t.port(), method, target);
      List<String> counted = t.store().take();
      SENT.computeIfAbsent(t.name(), k -> new AtomicInteger()).incrementAndGet();
      if (body == null) {
        continue;
      }
      SERVED.computeIfAbsent(t.name(), k -> new AtomicInteger()).incrementAndGet();
      String[] words = body.split(" ", -1);
      Route route = Route.valueOf(words[0].substring("route=".length()));
      List<String> values = new ArrayList<>();
      for (int i = 1; i < words.length; i++) {
        values.add(URLDecoder.decode(words[i], StandardCharsets.UTF_8));
      }
      Set<String> missing = new LinkedHashSet<>(route.expected(values));
      missing.removeAll(counted);
      if (!missing.isEmpty()) {
        failures.add(
            t.name() + " served " + method + " " + target + " as " + body + " without " + missing);
      }
    }
    return failures;
  }

  /** The body of a 200 answer to the request, or null for any other status. */
  private static String send(int port, String method, String target) throws IOException {
    try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
      s.setSoTimeout(10_000);
      OutputStream out = s.getOutputStream();
      out.write(
          (method
                  + " "
                  + target
                  + " HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
              .getBytes(StandardCharsets.UTF_8));
      out.flush();
      InputStream in = s.getInputStream();
      String all = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      if (!all.startsWith("HTTP/1.1 200")) {
        return null;
      }
      int b = all.indexOf("\r\n\r\n");
      String body = all.substring(b + 4);
      if (all.substring(0, b).toLowerCase(Locale.ROOT).contains("transfer-encoding: chunked")) {
        // One chunk: its size line, the data, the terminator.
        int nl = body.indexOf("\r\n");
        int size = Integer.parseInt(body.substring(0, nl).trim(), 16);
        body = body.substring(nl + 2, nl + 2 + size);
      }
      return body.strip();
    }
  }
}
