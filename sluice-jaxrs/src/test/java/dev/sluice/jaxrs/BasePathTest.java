package dev.sluice.jaxrs;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.spi.ReferenceCounterStore;
import dev.sluice.yaml.YamlRules;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import org.glassfish.jersey.internal.MapPropertiesDelegate;
import org.glassfish.jersey.server.ApplicationHandler;
import org.glassfish.jersey.server.ContainerRequest;
import org.glassfish.jersey.server.ContainerResponse;
import org.glassfish.jersey.server.ResourceConfig;
import org.junit.jupiter.api.Test;

/** Rule paths are the path below the application's base URI, whatever that base is. */
class BasePathTest {

  @Path("/api/report")
  public static class Api {
    @GET
    public String report() {
      return "{}";
    }
  }

  private static final String RULES =
      """
      rules:
        - id: report
          match: { methods: [GET], path: /api/report }
          key: [header:X-Api-Key]
          tiers: [ { limit: 100, period: 1m } ]
        - id: with-base
          match: { prefix: /app }
          key: [header:X-Api-Key]
          tiers: [ { limit: 100, period: 1m } ]
      """;

  private static ContainerResponse get(String base, String path) throws Exception {
    ResourceConfig app =
        new ResourceConfig(Api.class)
            .register(
                SluiceFeature.builder(new ReferenceCounterStore())
                    .rules(YamlRules.parse(RULES, "test"))
                    .build());
    ApplicationHandler handler = new ApplicationHandler(app);
    ContainerRequest r =
        new ContainerRequest(
            URI.create(base),
            URI.create(base + path),
            "GET",
            null,
            new MapPropertiesDelegate(),
            null);
    r.header("X-Api-Key", "k");
    return handler.apply(r, new ByteArrayOutputStream()).get();
  }

  @Test
  void atTheRootThePathIsTheRequestsOwn() throws Exception {
    ContainerResponse r = get("http://localhost/", "api/report");
    assertEquals(200, r.getStatus());
    assertEquals("\"report\";q=100;w=60", r.getHeaderString("RateLimit-Policy"));
  }

  @Test
  void belowABaseThePathStartsAfterIt() throws Exception {
    ContainerResponse r = get("http://localhost/app/", "api/report");
    assertEquals(200, r.getStatus());
    assertEquals("\"report\";q=100;w=60", r.getHeaderString("RateLimit-Policy"));
  }
}
