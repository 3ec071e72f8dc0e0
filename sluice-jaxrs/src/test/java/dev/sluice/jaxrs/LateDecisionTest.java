package dev.sluice.jaxrs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.sluice.spi.ReferenceCounterStore;
import dev.sluice.yaml.YamlRules;
import jakarta.annotation.Priority;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.core.Response;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.glassfish.grizzly.http.server.HttpServer;
import org.glassfish.jersey.grizzly2.httpserver.GrizzlyHttpServerFactory;
import org.glassfish.jersey.server.ResourceConfig;
import org.junit.jupiter.api.Test;

/**
 * In an application with {@link RateLimited} resources, where a request is decided once Jersey has
 * matched it: a refusal replaces whatever another filter answered, headers included.
 */
class LateDecisionTest {

  @Path("/")
  public static class Api {
    @GET
    @Path("annotated")
    @RateLimited(limit = 100, period = "1h", key = "header:X-Client", id = "annotated")
    public String annotated() {
      return "{}";
    }

    @GET
    @Path("secret")
    public String secret() {
      return "{}";
    }
  }

  /** Answers every request to {@code /secret} with a 401 that tells a client how to log in. */
  @Priority(Priorities.AUTHENTICATION)
  public static class Auth implements ContainerRequestFilter {
    @Override
    public void filter(ContainerRequestContext ctx) {
      if (ctx.getUriInfo().getPath().endsWith("secret")) {
        ctx.abortWith(
            Response.status(401)
                .header("WWW-Authenticate", "Bearer realm=\"api\"")
                .header("Set-Cookie", "attempt=1")
                .header("Cache-Control", "max-age=60")
                .build());
      }
    }
  }

  private static final String RULES =
      """
      rules:
        - { id: per-client, match: { prefix: /secret }, key: [header:X-Client],
            algorithm: fixed-window, tiers: [ { limit: 2, period: 1h } ] }
      """;

  private static HttpResponse<String> get(URI base, String path) throws Exception {
    return HttpClient.newHttpClient()
        .send(
            HttpRequest.newBuilder(base.resolve(path))
                .header("X-Client", "c")
                .timeout(Duration.ofSeconds(10))
                .build(),
            HttpResponse.BodyHandlers.ofString());
  }

  private static HttpServer start(SluiceFeature feature) throws IOException {
    ResourceConfig app =
        new ResourceConfig(Api.class, Auth.class)
            .register(feature)
            .property("jersey.config.server.wadl.disableWadl", true);
    HttpServer server =
        GrizzlyHttpServerFactory.createHttpServer(URI.create("http://127.0.0.1:0/"), app, false);
    server.start();
    return server;
  }

  @Test
  void aLateRefusalCarriesNoneOfTheHeadersAnotherFilterSet() throws Exception {
    SluiceFeature feature =
        SluiceFeature.builder(new ReferenceCounterStore())
            .rules(YamlRules.parse(RULES, "late"))
            .build();
    HttpServer server = start(feature);
    try {
      URI base = URI.create("http://127.0.0.1:" + server.getListener("grizzly").getPort() + "/");
      for (int i = 0; i < 2; i++) {
        assertEquals(401, get(base, "secret").statusCode());
      }
      HttpResponse<String> refused = get(base, "secret");
      assertEquals(429, refused.statusCode());
      assertFalse(
          refused.headers().firstValue("WWW-Authenticate").isPresent(),
          refused.headers().map().toString());
      assertFalse(
          refused.headers().firstValue("Set-Cookie").isPresent(),
          refused.headers().map().toString());
      assertEquals("no-store", refused.headers().firstValue("Cache-Control").orElse(""));
    } finally {
      server.shutdownNow();
      feature.close();
    }
  }
}
