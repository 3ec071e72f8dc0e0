package dev.sluice.example;

import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;

/** The demo API: small JSON answers. */
@Path("/")
@Produces("application/json")
public class DemoResources {

  @GET
  @Path("api/v1/report")
  public String report() {
    return "{\"report\":\"weekly\",\"rows\":3}";
  }

  /** A search: cheap enough for bursts, limited by a token bucket in the bundled rules. */
  @GET
  @Path("api/v1/search")
  public String search(@jakarta.ws.rs.QueryParam("q") @jakarta.ws.rs.DefaultValue("") String q) {
    return "{\"query\":\"" + json(q) + "\",\"hits\":[]}";
  }

  /** Saves a lead: the demo's critical write. {@code ms} makes it take that long (at most 10 s). */
  @POST
  @Path("api/v1/lead/{id}")
  public String lead(
      @PathParam("id") String id,
      @jakarta.ws.rs.QueryParam("ms") @jakarta.ws.rs.DefaultValue("0") long ms)
      throws InterruptedException {
    work(ms);
    return "{\"lead\":\"" + json(id) + "\",\"saved\":true}";
  }

  @GET
  @Path("v1/organizations/{orgId}/product/{id}")
  public String product(@PathParam("orgId") String org, @PathParam("id") String id) {
    return "{\"organization\":\"" + json(org) + "\",\"product\":\"" + json(id) + "\"}";
  }

  /** Updates a product; {@code ms} makes it take that long (at most 10 s). */
  @PUT
  @Path("v1/organizations/{orgId}/product/{id}")
  public String updateProduct(
      @PathParam("orgId") String org,
      @PathParam("id") String id,
      @jakarta.ws.rs.QueryParam("ms") @jakarta.ws.rs.DefaultValue("0") long ms)
      throws InterruptedException {
    work(ms);
    return "{\"organization\":\""
        + json(org)
        + "\",\"product\":\""
        + json(id)
        + "\",\"updated\":true}";
  }

  /** The most a slow request may wait. */
  static final long MAX_SLOW_MILLIS = 10_000;

  /** Simulated work: {@code ms} milliseconds, at most {@link #MAX_SLOW_MILLIS}. */
  private static void work(long ms) throws InterruptedException {
    long wait = Math.max(0, Math.min(MAX_SLOW_MILLIS, ms));
    if (wait > 0) {
      Thread.sleep(wait);
    }
  }

  private static final java.util.concurrent.ConcurrentMap<
          String, java.util.concurrent.atomic.AtomicInteger>
      IN_FLIGHT = new java.util.concurrent.ConcurrentHashMap<>();
  private static final java.util.concurrent.ConcurrentMap<String, Integer> PEAK =
      new java.util.concurrent.ConcurrentHashMap<>();

  /** Waits {@code ms} milliseconds (at most 10 s) before answering: an expensive endpoint. */
  @GET
  @Path("api/v1/slow")
  public String slow(
      @jakarta.ws.rs.QueryParam("ms") @jakarta.ws.rs.DefaultValue("1000") long ms,
      @jakarta.ws.rs.HeaderParam("X-Api-Key") @jakarta.ws.rs.DefaultValue("") String key)
      throws InterruptedException {
    long wait = Math.max(0, Math.min(MAX_SLOW_MILLIS, ms));
    int now =
        IN_FLIGHT
            .computeIfAbsent(key, k -> new java.util.concurrent.atomic.AtomicInteger())
            .incrementAndGet();
    PEAK.merge(key, now, Math::max);
    try {
      Thread.sleep(wait);
    } finally {
      IN_FLIGHT.get(key).decrementAndGet();
    }
    return "{\"slow\":true,\"waitedMs\":" + wait + "}";
  }

  /**
   * The most slow requests of one API key that were ever in flight at once in this JVM, across
   * every demo instance it runs; for the end-to-end tests.
   */
  public static int peakInFlight(String apiKey) {
    return PEAK.getOrDefault(apiKey, 0);
  }

  @GET
  @Path("health")
  public String health() {
    return "{\"status\":\"up\"}";
  }

  private static String json(String s) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\') {
        sb.append('\\').append(c);
      } else if (c < 0x20) {
        sb.append(String.format("\\u%04x", (int) c));
      } else {
        sb.append(c);
      }
    }
    return sb.toString();
  }
}
