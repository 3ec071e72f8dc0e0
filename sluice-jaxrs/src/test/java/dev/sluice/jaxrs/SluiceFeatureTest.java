package dev.sluice.jaxrs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.spi.FakeClock;
import dev.sluice.spi.ReferenceCounterStore;
import dev.sluice.yaml.YamlRules;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Application;
import jakarta.ws.rs.core.Response;
import java.util.List;
import org.glassfish.jersey.server.ResourceConfig;
import org.glassfish.jersey.test.JerseyTest;
import org.junit.jupiter.api.Test;

class SluiceFeatureTest extends JerseyTest {

  // configure() runs in JerseyTest's constructor, before instance fields are initialized: each test
  // gets a new clock and feature there.
  private static FakeClock clock;
  private static SluiceFeature feature;

  @Path("/")
  @Produces("application/json")
  public static class Api {
    @GET
    @Path("api/v1/report")
    public String report() {
      return "{\"report\":\"ok\"}";
    }

    @GET
    @Path("v1/organizations/{orgId}/product/{id: [0-9]+}")
    public String product(@PathParam("orgId") String org, @PathParam("id") String id) {
      return "{\"org\":\"" + org + "\"}";
    }

    @GET
    @Path("annotated/{id}")
    @RateLimited(limit = 2, period = "1m", key = "header:X-Api-Key")
    public String annotated() {
      return "{}";
    }

    @GET
    @Path("api/v1/own-headers")
    public Response ownHeaders() {
      return Response.ok("{}").header("x-ratelimit-limit", "resource's own").build();
    }

    @GET
    @Path("health")
    public String health() {
      return "{\"status\":\"up\"}";
    }
  }

  @Override
  protected Application configure() {
    clock = new FakeClock();
    // The in-memory test container has no peer address: the test header stands in for it.
    feature =
        SluiceFeature.builder(new ReferenceCounterStore())
            .clock(clock)
            .remoteAddress(
                ctx ->
                    ctx.getHeaderString("X-Test-Peer") == null
                        ? "192.0.2.1"
                        : ctx.getHeaderString("X-Test-Peer"))
            .rules(
                YamlRules.parse(
                    """
        trustedProxies: [10.0.0.0/8]
        rules:
          - id: report
            match: { methods: [GET], path: /api/v1/report }
            key: [header:X-Api-Key, ip]
            algorithm: fixed-window
            tiers: [ { limit: 3, period: 10s } ]
          - id: own-headers
            match: { path: /api/v1/own-headers }
            key: [ip]
            tiers: [ { limit: 5, period: 10s } ]
          - id: get-product
            match: { methods: [GET], path: "/v1/organizations/{orgId}/product/*" }
            key: [path:orgId]
            tiers: [ { limit: 100, period: 1m }, { limit: 2, period: 1s } ]
          - id: dark
            match: { prefix: /v1 }
            key: [ip]
            tiers: [ { limit: 1, period: 1h } ]
            shadow: true
        """,
                    "test-rules.yaml"))
            .build();
    return new ResourceConfig(Api.class).register(feature);
  }

  private Response get(String path, String apiKey) {
    var r = target(path).request();
    if (apiKey != null) {
      r = r.header("X-Api-Key", apiKey);
    }
    return r.get();
  }

  @Test
  void remainingCountsDownThenA429WithRetryAfterAndAProblemBody() {
    clock.advanceMillis(2_500);
    for (int i = 1; i <= 3; i++) {
      Response r = get("api/v1/report", "key-1");
      assertEquals(200, r.getStatus());
      assertEquals("3", r.getHeaderString("X-RateLimit-Limit"));
      assertEquals(String.valueOf(3 - i), r.getHeaderString("X-RateLimit-Remaining"));
      assertEquals(String.valueOf(i), r.getHeaderString("X-RateLimit-Used"));
      assertEquals("8", r.getHeaderString("X-RateLimit-Reset"), "7.5 s rounded up");
      assertEquals("\"report\";q=3;w=10", r.getHeaderString("RateLimit-Policy"));
      assertEquals("\"report\";r=" + (3 - i) + ";t=8", r.getHeaderString("RateLimit"));
    }
    Response rejected = get("api/v1/report", "key-1");
    assertEquals(429, rejected.getStatus());
    assertEquals("8", rejected.getHeaderString("Retry-After"));
    assertEquals("no-store", rejected.getHeaderString("Cache-Control"));
    assertEquals("application/problem+json", rejected.getMediaType().toString());
    String body = rejected.readEntity(String.class);
    assertTrue(body.contains("\"policy\":\"report\"") && body.contains("\"retryAfter\":8"), body);
    assertEquals("0", rejected.getHeaderString("X-RateLimit-Remaining"));

    assertEquals(200, get("api/v1/report", "key-2").getStatus(), "identities stay apart");
    clock.advanceMillis(7_500);
    assertEquals(200, get("api/v1/report", "key-1").getStatus(), "passes when Retry-After said");
  }

  @Test
  void aHeaderTheResourceSetInAnyCaseIsKeptAndTheOthersAreAdded() {
    Response r = get("api/v1/own-headers", null);
    assertEquals(200, r.getStatus());
    assertEquals(List.of("resource's own"), r.getStringHeaders().get("X-RateLimit-Limit"));
    assertEquals(List.of("4"), r.getStringHeaders().get("X-RateLimit-Remaining"));
  }

  @Test
  void unlimitedPathsCarryNoHeaders() {
    Response r = get("health", null);
    assertEquals(200, r.getStatus());
    assertNull(r.getHeaderString("X-RateLimit-Limit"));
  }

  @Test
  void theTierClosestToItsLimitIsReportedAndEveryTierIsAPolicy() {
    Response r = get("v1/organizations/acme/product/1", null);
    assertEquals("2", r.getHeaderString("X-RateLimit-Limit"));
    assertEquals("1", r.getHeaderString("X-RateLimit-Remaining"));
    assertEquals(
        "\"get-product-60s\";q=100;w=60, \"get-product-1s\";q=2;w=1",
        r.getHeaderString("RateLimit-Policy"),
        "the shadow rule is not advertised");
    assertEquals(200, get("v1/organizations/acme/product/2", null).getStatus());
    assertEquals(
        429, get("v1/organizations/acme/product/3", null).getStatus(), "same org, any product");
    assertEquals(200, get("v1/organizations/other/product/3", null).getStatus());
  }

  @Test
  void annotationsLimitTheirEndpointGroup() {
    assertEquals(200, get("annotated/1", "k").getStatus());
    Response second = get("annotated/2", "k");
    assertEquals(200, second.getStatus());
    assertEquals("2", second.getHeaderString("X-RateLimit-Limit"));
    assertEquals("\"GET /annotated/{id}\";q=2;w=60", second.getHeaderString("RateLimit-Policy"));
    Response third = get("annotated/3", "k");
    assertEquals(429, third.getStatus());
    assertEquals(200, get("annotated/3", "other").getStatus());
  }

  @Test
  void aSpoofedForwardedForFromAnUntrustedPeerIsIgnored() {
    for (int i = 0; i < 3; i++) {
      target("api/v1/report").request().header("X-Test-Peer", "203.0.113.5").get();
    }
    for (int i = 0; i < 10; i++) {
      Response r =
          target("api/v1/report")
              .request()
              .header("X-Test-Peer", "203.0.113.5")
              .header("X-Forwarded-For", "198.51.100." + i)
              .get();
      assertEquals(429, r.getStatus(), "spoof " + i);
    }
    Response viaProxy =
        target("api/v1/report")
            .request()
            .header("X-Test-Peer", "10.1.1.1")
            .header("X-Forwarded-For", "198.51.100.1")
            .get();
    assertEquals(200, viaProxy.getStatus(), "a trusted proxy's header names a new client");
  }

  @Test
  void theKillSwitchStopsLimitingAndTheShadowRuleNeverRejects() {
    for (int i = 0; i < 3; i++) {
      get("api/v1/report", "kill");
    }
    assertEquals(429, get("api/v1/report", "kill").getStatus());
    for (int i = 0; i < 3; i++) {
      get("annotated/" + i, "kill");
    }
    assertEquals(429, get("annotated/9", "kill").getStatus());
    feature.limiter().setEnabled(false);
    Response r = get("api/v1/report", "kill");
    assertEquals(200, r.getStatus());
    assertNull(r.getHeaderString("X-RateLimit-Limit"));
    assertEquals(
        200, get("annotated/9", "kill").getStatus(), "the kill switch covers annotations too");
    feature.limiter().setEnabled(true);
    assertEquals(429, get("api/v1/report", "kill").getStatus());
    for (int i = 0; i < 5; i++) {
      assertEquals(
          200,
          get("v1/organizations/o" + i + "/product/1", null).getStatus(),
          "dark rule (1/h) never rejects");
    }
  }
}
