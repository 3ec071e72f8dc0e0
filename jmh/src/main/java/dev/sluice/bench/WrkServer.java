package dev.sluice.bench;

import dev.sluice.http.RequestLimiter;
import dev.sluice.jaxrs.SluiceFeature;
import dev.sluice.servlet.SluiceFilter;
import dev.sluice.spi.CounterStore;
import dev.sluice.store.inmemory.InMemoryCounterStore;
import dev.sluice.store.memcached.MemcachedCounterStore;
import dev.sluice.store.memcached.Wakeups;
import dev.sluice.store.redis.RedisCounterStore;
import dev.sluice.yaml.YamlRules;
import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.ConsumptionProbe;
import jakarta.inject.Inject;
import jakarta.inject.Provider;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.container.ContainerResponseContext;
import jakarta.ws.rs.container.ContainerResponseFilter;
import jakarta.ws.rs.core.Response;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import net.spy.memcached.MemcachedClient;
import org.apache.catalina.Context;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;
import org.glassfish.grizzly.http.server.HttpServer;
import org.glassfish.jersey.grizzly2.httpserver.GrizzlyHttpServerFactory;
import org.glassfish.jersey.server.ResourceConfig;

/**
 * The server {@code docs/bench/cost.sh} loads with wrk: {@code GET /api/v1/report} answering a
 * small JSON body, with or without a limiter in front, on Grizzly (Jersey) or Tomcat (a servlet).
 * Every limiter counts the same three counters per request: two tiers per API key and one per
 * address.
 *
 * <pre>
 * java -cp jmh/target/benchmarks.jar dev.sluice.bench.WrkServer --port 18080 --mode MODE
 *     [--container grizzly|tomcat] [--rules FILE] [--memcached host:port] [--redis host:port]
 * </pre>
 *
 * Modes: {@code off} (nothing in front), {@code sluice} (the rules file, in memory; {@code
 * sluice-memcached} on {@code --memcached}, {@code sluice-redis} on {@code --redis}), {@code floor}
 * (the three {@code incr}s sent straight through spymemcached in one round trip, nothing decided),
 * {@code floor-redis} (the store's {@code count.lua} called through Lettuce for the same three
 * counters, one {@code EVALSHA}, nothing decided), {@code bucket4j} (what Bucket4j's documentation
 * leads a JAX-RS user to write: a filter over a bucket per key and one per address, writing the
 * same {@code X-RateLimit} headers), {@code headers} (the filter floor: on Grizzly a JAX-RS filter
 * pair, on Tomcat a servlet filter, writing Sluice's headers with fixed values and counting
 * nothing, the least a limiter that writes them costs). Runs until killed.
 */
public final class WrkServer {

  private WrkServer() {}

  /** The filter floor's headers: Sluice's six, with values as long as Sluice's here, fixed. */
  private static final String[] FLOOR_HEADERS = {
    "X-RateLimit-Limit", "10000000",
    "X-RateLimit-Remaining", "9999999",
    "X-RateLimit-Used", "1",
    "X-RateLimit-Reset", "2",
    "RateLimit-Policy",
        "\"per-key-60s\";q=100000000;w=60, \"per-key-1s\";q=10000000;w=1,"
            + " \"per-ip\";q=1000000000;w=60",
    "RateLimit",
        "\"per-key-60s\";r=99999874;t=83, \"per-key-1s\";r=9999999;t=2,"
            + " \"per-ip\";r=999876539;t=83",
  };

  /** The endpoint every mode serves. */
  @Path("/api/v1/report")
  public static final class Report {
    @GET
    @Produces("application/json")
    public String report() {
      return "{\"report\":\"ok\"}";
    }
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> o = new java.util.HashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      o.put(args[i].replaceFirst("^--", ""), args[i + 1]);
    }
    int port = Integer.parseInt(o.getOrDefault("port", "18080"));
    String container = o.getOrDefault("container", "grizzly");
    String memcached = o.get("memcached");
    String redis = o.get("redis");
    java.nio.file.Path rules =
        o.containsKey("rules") ? java.nio.file.Path.of(o.get("rules")) : null;
    // Several modes share one JVM, one port each from --port up: they share the JIT's work, so
    // their figures differ by what each mode does, not by how one JVM's compilation went.
    String[] modes = o.getOrDefault("modes", o.getOrDefault("mode", "off")).split(",", -1);
    for (int i = 0; i < modes.length; i++) {
      String mode = modes[i];
      boolean onMemcached = mode.endsWith("-memcached");
      boolean onRedis = mode.endsWith("-redis");
      String base = onMemcached || onRedis ? mode.substring(0, mode.lastIndexOf('-')) : mode;
      String servers =
          onRedis
              ? "redis=" + redis
              : onMemcached || base.equals("floor") ? "memcached=" + memcached : null;
      if (container.equals("tomcat")) {
        tomcat(port + i, base, rules, servers);
      } else {
        grizzly(port + i, base, rules, servers);
      }
      System.out.println("ready: " + container + " " + mode + " on " + (port + i));
    }
    Thread.currentThread().join();
  }

  /**
   * In memory when {@code servers} is null, else {@code memcached=host:port} or {@code redis=…}.
   */
  private static CounterStore store(String servers) {
    if (servers == null) {
      return InMemoryCounterStore.create();
    }
    String address = servers.substring(servers.indexOf('=') + 1);
    return servers.startsWith("redis=")
        ? RedisCounterStore.builder().uri(address).build()
        : MemcachedCounterStore.builder().servers(address).build();
  }

  private static void grizzly(int port, String mode, java.nio.file.Path rules, String servers)
      throws IOException {
    ResourceConfig app =
        new ResourceConfig(Report.class).property("jersey.config.server.wadl.disableWadl", true);
    switch (mode) {
      case "off" -> {}
      case "sluice" -> app.register(SluiceFeature.builder(store(servers)).rulesFile(rules).build());
      case "floor" -> {
        String address = servers.substring(servers.indexOf('=') + 1);
        if (servers.startsWith("redis=")) {
          RedisFloor.start(address);
          app.register(RedisFloor.class);
        } else {
          Floor.client = BenchMemcached.raw(address);
          app.register(Floor.class);
        }
      }
      case "bucket4j" -> app.register(Bucket4jFilter.class);
      case "headers" -> app.register(HeadersOnly.class);
      default -> throw new IllegalArgumentException("unknown mode: " + mode);
    }
    HttpServer server =
        GrizzlyHttpServerFactory.createHttpServer(
            URI.create("http://127.0.0.1:" + port + "/"), app, false);
    // As the demo: keep-alive connections stay open (Grizzly closes one after 256 requests).
    server.getListener("grizzly").getKeepAlive().setMaxRequestsCount(-1);
    server.start();
  }

  private static void tomcat(int port, String mode, java.nio.file.Path rules, String servers)
      throws Exception {
    Tomcat tomcat = new Tomcat();
    tomcat.setBaseDir(Files.createTempDirectory("wrk-tomcat").toString());
    tomcat.setPort(port);
    tomcat.getConnector();
    Context ctx = tomcat.addContext("", null);
    Tomcat.addServlet(
        ctx,
        "report",
        new HttpServlet() {
          private static final long serialVersionUID = 1L;

          @Override
          protected void doGet(HttpServletRequest req, HttpServletResponse res) throws IOException {
            res.setContentType("application/json");
            res.getWriter().write("{\"report\":\"ok\"}");
          }
        });
    ctx.addServletMappingDecoded("/api/v1/report", "report");
    if (mode.equals("sluice")) {
      RequestLimiter limiter =
          RequestLimiter.builder(store(servers)).rules(YamlRules.load(rules)).build();
      filter(ctx, "sluice", new SluiceFilter(limiter));
    } else if (mode.equals("headers")) {
      // The filter floor, as on Grizzly: Sluice's six headers, fixed, nothing counted.
      filter(
          ctx,
          "headers",
          new jakarta.servlet.Filter() {
            @Override
            public void doFilter(
                jakarta.servlet.ServletRequest req,
                jakarta.servlet.ServletResponse res,
                jakarta.servlet.FilterChain chain)
                throws IOException, jakarta.servlet.ServletException {
              if (((HttpServletRequest) req).getHeader("X-Api-Key") != null) {
                for (int i = 0; i < FLOOR_HEADERS.length; i += 2) {
                  ((HttpServletResponse) res).setHeader(FLOOR_HEADERS[i], FLOOR_HEADERS[i + 1]);
                }
              }
              chain.doFilter(req, res);
            }
          });
    } else if (!mode.equals("off")) {
      throw new IllegalArgumentException("tomcat takes off, sluice or headers: " + mode);
    }
    tomcat.start();
  }

  /** Puts {@code filter} in front of every path of {@code ctx}. */
  private static void filter(Context ctx, String name, jakarta.servlet.Filter filter) {
    FilterDef def = new FilterDef();
    def.setFilterName(name);
    def.setFilter(filter);
    ctx.addFilterDef(def);
    FilterMap map = new FilterMap();
    map.setFilterName(name);
    map.addURLPattern("/*");
    ctx.addFilterMap(map);
  }

  /**
   * The memcached floor: per request the same three {@code incr}s a decision sends (two tiers of
   * the key, one of the address), queued together ({@link Wakeups#together}, as the store queues
   * them) so spymemcached writes them in one round trip, and nothing else.
   */
  public static final class Floor implements ContainerRequestFilter {
    static volatile MemcachedClient client;
    @Inject private Provider<org.glassfish.grizzly.http.server.Request> request;

    @Override
    public void filter(ContainerRequestContext ctx) {
      long now = System.currentTimeMillis();
      String key = ctx.getHeaderString("X-Api-Key");
      String ip = request.get().getRemoteAddr();
      List<Future<Long>> incrs = new ArrayList<>(3);
      Wakeups.together(
          () -> {
            incrs.add(client.asyncIncr("k:" + key + ":60000:" + now / 60_000, 1L, 1L, 120));
            incrs.add(client.asyncIncr("k:" + key + ":1000:" + now / 1_000, 1L, 1L, 2));
            incrs.add(client.asyncIncr("i:" + ip + ":60000:" + now / 60_000, 1L, 1L, 120));
          });
      try {
        for (Future<Long> f : incrs) {
          f.get(50, TimeUnit.MILLISECONDS);
        }
      } catch (Exception e) {
        // As a limiter failing open: the request goes on.
      }
    }
  }

  /**
   * The Redis floor: per request the Redis store's own {@code count.lua} for the same three
   * counters (two tiers of the key, one of the address; each previous window's count known, as the
   * store sends it once it has read it), one {@code EVALSHA} through Lettuce awaited as the store
   * awaits it, and nothing else: no key digests, no breakers, no decision.
   */
  public static final class RedisFloor implements ContainerRequestFilter {
    private static volatile io.lettuce.core.api.async.RedisAsyncCommands<String, String> redis;
    private static volatile String sha;
    @Inject private Provider<org.glassfish.grizzly.http.server.Request> request;

    static void start(String address) throws IOException {
      io.lettuce.core.RedisClient client =
          io.lettuce.core.RedisClient.create(
              address.contains("://") ? address : "redis://" + address);
      var connection = client.connect();
      String body;
      try (var in = RedisFloor.class.getResourceAsStream("/dev/sluice/store/redis/count.lua")) {
        body = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
      }
      sha = connection.sync().scriptLoad(body);
      redis = connection.async();
    }

    @Override
    public void filter(ContainerRequestContext ctx) {
      long now = System.currentTimeMillis();
      String key = ctx.getHeaderString("X-Api-Key");
      String ip = request.get().getRemoteAddr();
      String[] keys = {
        "f:{" + key + "}:per-key:60000:" + now / 60_000,
        "f:{" + key + "}:per-key:1000:" + now / 1_000,
        "f:{" + ip + "}:per-ip:60000:" + now / 60_000
      };
      String[] args = {
        "c", "1", "130000", "0", "9223372036854775807",
        "c", "1", "12000", "0", "9223372036854775807",
        "c", "1", "130000", "0", "9223372036854775807"
      };
      try {
        redis
            .evalsha(sha, io.lettuce.core.ScriptOutputType.MULTI, keys, args)
            .get(50, TimeUnit.MILLISECONDS);
      } catch (Exception e) {
        // As a limiter failing open: the request goes on.
      }
    }
  }

  /**
   * What any JAX-RS limiter pays before it counts anything: a request filter that reads the API key
   * and a response filter that writes Sluice's six headers, with values as long as Sluice's, fixed.
   * Nothing is counted or decided.
   */
  public static final class HeadersOnly implements ContainerRequestFilter, ContainerResponseFilter {
    private static final String KEY = "headers-only.key";

    @Override
    public void filter(ContainerRequestContext ctx) {
      ctx.setProperty(KEY, ctx.getHeaderString("X-Api-Key"));
    }

    @Override
    public void filter(ContainerRequestContext req, ContainerResponseContext res) {
      if (req.getProperty(KEY) != null) {
        for (int i = 0; i < FLOOR_HEADERS.length; i += 2) {
          res.getHeaders().add(FLOOR_HEADERS[i], FLOOR_HEADERS[i + 1]);
        }
      }
    }
  }

  /**
   * A JAX-RS filter over Bucket4j as its documentation describes: a bucket per API key with both
   * tiers as bandwidths, one per address, the same six rate-limit headers as Sluice on every
   * response, 429 with {@code Retry-After} when a bucket is empty.
   */
  public static final class Bucket4jFilter
      implements ContainerRequestFilter, ContainerResponseFilter {
    private static final long KEY_MINUTE = 100_000_000;
    private static final long KEY_SECOND = 10_000_000;
    private static final long IP_MINUTE = 1_000_000_000;
    private static final String HEADERS = "bucket4j.headers";
    private static final Map<String, Bucket> KEYS = new ConcurrentHashMap<>();
    private static final Map<String, Bucket> ADDRESSES = new ConcurrentHashMap<>();

    @Inject private Provider<org.glassfish.grizzly.http.server.Request> request;

    private static Bandwidth limit(long n, Duration period) {
      return Bandwidth.builder().capacity(n).refillGreedy(n, period).build();
    }

    @Override
    public void filter(ContainerRequestContext ctx) {
      String key = ctx.getHeaderString("X-Api-Key");
      String ip = request.get().getRemoteAddr();
      Bucket byKey =
          KEYS.computeIfAbsent(
              key,
              k ->
                  Bucket.builder()
                      .addLimit(limit(KEY_MINUTE, Duration.ofMinutes(1)))
                      .addLimit(limit(KEY_SECOND, Duration.ofSeconds(1)))
                      .build());
      Bucket byIp =
          ADDRESSES.computeIfAbsent(
              ip, k -> Bucket.builder().addLimit(limit(IP_MINUTE, Duration.ofMinutes(1))).build());
      ConsumptionProbe p = byKey.tryConsumeAndReturnRemaining(1);
      ConsumptionProbe q = p.isConsumed() ? byIp.tryConsumeAndReturnRemaining(1) : p;
      if (!q.isConsumed()) {
        long retry = Math.max(1, TimeUnit.NANOSECONDS.toSeconds(q.getNanosToWaitForRefill()) + 1);
        Response.ResponseBuilder r = Response.status(429).header("Retry-After", retry);
        headers(q).forEach(r::header);
        ctx.abortWith(r.build());
        return;
      }
      ctx.setProperty(HEADERS, headers(p));
    }

    /**
     * The headers Sluice writes, from the key's bucket: the tightest tier (1 s) as X-RateLimit, and
     * both tiers in the IETF fields.
     */
    private static Map<String, String> headers(ConsumptionProbe p) {
      long remaining = p.getRemainingTokens();
      long resetSeconds =
          Math.max(1, TimeUnit.NANOSECONDS.toSeconds(p.getNanosToWaitForReset()) + 1);
      Map<String, String> h = new java.util.LinkedHashMap<>(8);
      h.put("X-RateLimit-Limit", Long.toString(KEY_SECOND));
      h.put("X-RateLimit-Remaining", Long.toString(remaining));
      h.put("X-RateLimit-Used", Long.toString(KEY_SECOND - remaining));
      h.put("X-RateLimit-Reset", Long.toString(resetSeconds));
      h.put(
          "RateLimit-Policy",
          "\"per-key-1m\";q=" + KEY_MINUTE + ";w=60, \"per-key-1s\";q=" + KEY_SECOND + ";w=1");
      h.put("RateLimit", "\"per-key-1s\";r=" + remaining + ";t=" + resetSeconds);
      return h;
    }

    @Override
    @SuppressWarnings("unchecked")
    public void filter(ContainerRequestContext req, ContainerResponseContext res) {
      if (req.getProperty(HEADERS) instanceof Map<?, ?> h) {
        ((Map<String, String>) h).forEach((name, value) -> res.getHeaders().add(name, value));
      }
    }
  }
}
