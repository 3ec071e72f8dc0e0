package dev.sluice.bench;

import dev.sluice.example.DemoResources;
import dev.sluice.jaxrs.SluiceFeature;
import dev.sluice.spi.CounterStore;
import dev.sluice.store.inmemory.InMemoryCounterStore;
import dev.sluice.yaml.YamlRules;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.container.ContainerResponseContext;
import jakarta.ws.rs.container.ContainerResponseFilter;
import jakarta.ws.rs.container.PreMatching;
import jakarta.ws.rs.core.MultivaluedMap;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.glassfish.jersey.internal.MapPropertiesDelegate;
import org.glassfish.jersey.server.ApplicationHandler;
import org.glassfish.jersey.server.ContainerRequest;
import org.glassfish.jersey.server.ContainerResponse;
import org.glassfish.jersey.server.ResourceConfig;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One in-process Jersey request (ApplicationHandler, no network) to the demo's {@code GET
 * /api/v1/report}: with no filter, with Sluice on the in-memory store, with Sluice on memcached.
 * Limits are high enough that every request passes; 1,000 API keys in turn. Two more in-memory rows
 * take parts away: {@code sluice-inmemory-ietf} sends only the two IETF fields, {@code
 * sluice-inmemory-one-tier} counts one tier instead of two. The other rows price what any filter
 * pays Jersey, without a decision: {@code noop}, a pre-matching request filter and a response
 * filter that do nothing; {@code noop-request-only} and {@code noop-response-only}, one of the two;
 * {@code noop-post-matching}, the pair with the request filter after resource matching; {@code
 * six-headers}, the pair with the response filter adding six constant headers the way Sluice's
 * does; {@code six-headers-lower-case}, the same with lower-case names, which Jersey's header map
 * hashes without lower-casing them again.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 8, time = 1) // with less, the bare request is still compiling when measured
@Measurement(iterations = 5, time = 2)
@Fork(4)
@State(Scope.Benchmark)
public class FilterOverheadBenchmark {

  @Param({
    "none",
    "noop",
    "noop-request-only",
    "noop-response-only",
    "noop-post-matching",
    "six-headers",
    "six-headers-lower-case",
    "sluice-inmemory",
    "sluice-inmemory-ietf",
    "sluice-inmemory-one-tier",
    "sluice-memcached"
  })
  public String filter;

  private static final String SECOND = "{ limit: 1000000000, period: 1s }";
  private static final String MINUTE = "{ limit: 1000000000, period: 1m }";

  private ApplicationHandler handler;
  private BenchMemcached memcached;
  private CounterStore store;
  private final String[] keys = new String[1_000];
  private int next;

  @Setup(Level.Trial)
  public void setUp() throws Exception {
    ResourceConfig app =
        new ResourceConfig(DemoResources.class)
            .property("jersey.config.server.wadl.disableWadl", true);
    if (filter.startsWith("noop") || filter.startsWith("six-headers")) {
      if (!filter.equals("noop-response-only")) {
        app.register(
            filter.equals("noop-post-matching")
                ? new NoopPostMatchingFilter()
                : new NoopRequestFilter());
      }
      if (!filter.equals("noop-request-only")) {
        app.register(
            new ConstantHeaders(
                filter.startsWith("six-headers"), filter.equals("six-headers-lower-case")));
      }
    } else if (!filter.equals("none")) {
      if (filter.equals("sluice-memcached")) {
        memcached = BenchMemcached.start();
        store = memcached.store();
      } else {
        store = InMemoryCounterStore.create();
      }
      String rules =
          switch (filter) {
            case "sluice-inmemory-ietf" -> rules("headers: [ietf]\n", SECOND + ", " + MINUTE);
            case "sluice-inmemory-one-tier" -> rules("", SECOND);
            default -> rules("", SECOND + ", " + MINUTE);
          };
      app.register(SluiceFeature.builder(store).rules(YamlRules.parse(rules, "bench")).build());
    }
    handler = new ApplicationHandler(app);
    for (int i = 0; i < keys.length; i++) {
      keys[i] = "key-" + i;
    }
    ContainerResponse check = request();
    if (check.getStatus() != 200
        || (filter.startsWith("sluice") && check.getHeaderString("RateLimit") == null)
        || (filter.endsWith("one-tier") && check.getHeaderString("RateLimit-Policy").contains(","))
        || (filter.endsWith("ietf") && check.getHeaderString("X-RateLimit-Limit") != null)) {
      throw new IllegalStateException(
          filter + ": status " + check.getStatus() + ", headers " + check.getStringHeaders());
    }
  }

  /** The rule every Sluice row enforces, after the rules file's {@code headers} line if any. */
  private static String rules(String headers, String tiers) {
    return headers
        + """
        rules:
          - id: report
            match: { methods: [GET], path: /api/v1/report }
            key: [header:X-Api-Key, ip]
            tiers: [ %s ]
        """
            .formatted(tiers);
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    if (store != null) {
      store.close();
    }
    if (memcached != null) {
      memcached.close();
    }
  }

  private ContainerResponse request() throws Exception {
    ContainerRequest r =
        new ContainerRequest(
            URI.create("http://localhost/"),
            URI.create("http://localhost/api/v1/report"),
            "GET",
            null,
            new MapPropertiesDelegate(),
            null);
    int i = next;
    next = i + 1 == keys.length ? 0 : i + 1;
    r.header("X-Api-Key", keys[i]);
    return handler.apply(r, new ByteArrayOutputStream(64)).get();
  }

  /** A pre-matching request filter that does nothing: Jersey's price for running one. */
  @PreMatching
  static final class NoopRequestFilter implements ContainerRequestFilter {
    @Override
    public void filter(ContainerRequestContext request) {}
  }

  /** The same, after resource matching. */
  static final class NoopPostMatchingFilter implements ContainerRequestFilter {
    @Override
    public void filter(ContainerRequestContext request) {}
  }

  /**
   * A response filter that adds six constant headers the way Sluice's does (or none): Jersey's
   * price for the response filter and for the six header entries, without any decision.
   */
  static final class ConstantHeaders implements ContainerResponseFilter {
    private static final String[] HEADERS = {
      "X-RateLimit-Limit", "100",
      "X-RateLimit-Remaining", "99",
      "X-RateLimit-Used", "1",
      "X-RateLimit-Reset", "60",
      "RateLimit-Policy", "\"report\";q=100;w=60",
      "RateLimit", "\"report\";r=99;t=60",
    };
    private final boolean write;
    private final String[] names = new String[HEADERS.length];

    ConstantHeaders(boolean write, boolean lowerCase) {
      this.write = write;
      for (int i = 0; i < HEADERS.length; i += 2) {
        names[i] = lowerCase ? HEADERS[i].toLowerCase(java.util.Locale.ROOT) : HEADERS[i];
      }
    }

    @Override
    public void filter(ContainerRequestContext request, ContainerResponseContext response) {
      if (write) {
        MultivaluedMap<String, Object> headers = response.getHeaders();
        for (int i = 0; i < HEADERS.length; i += 2) {
          List<Object> value = new ArrayList<>(1);
          value.add(HEADERS[i + 1]);
          headers.put(names[i], value);
        }
      }
    }
  }

  @Benchmark
  public int jerseyRequest() throws Exception {
    return request().getStatus();
  }
}
