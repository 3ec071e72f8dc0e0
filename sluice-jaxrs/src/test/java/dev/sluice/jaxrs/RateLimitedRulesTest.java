package dev.sluice.jaxrs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.OnStoreFailure;
import dev.sluice.http.RequestLimiter;
import dev.sluice.spi.FakeClock;
import dev.sluice.spi.ReferenceCounterStore;
import dev.sluice.yaml.YamlRules;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.Application;
import jakarta.ws.rs.core.Response;
import org.glassfish.jersey.server.ApplicationHandler;
import org.glassfish.jersey.server.ResourceConfig;
import org.glassfish.jersey.server.spi.Container;
import org.glassfish.jersey.test.JerseyTest;
import org.junit.jupiter.api.Test;

/** {@link RateLimited} rules live in the feature's limiter: reloads and switches reach them. */
class RateLimitedRulesTest extends JerseyTest {

  private static SluiceFeature feature;
  private static ReferenceCounterStore store;

  @Path("/")
  public static class Api {
    @GET
    @Path("limited")
    @RateLimited(limit = 1, period = "1h", key = "header:X-Client", id = "limited")
    public String limited() {
      return "{}";
    }

    @GET
    @Path("local")
    @RateLimited(
        limit = 4,
        period = "1h",
        key = "header:X-Client",
        id = "local",
        onStoreFailure = OnStoreFailure.LOCAL,
        instances = 2)
    public String local() {
      return "{}";
    }
  }

  @Override
  protected Application configure() {
    store = new ReferenceCounterStore();
    feature =
        SluiceFeature.builder(store)
            .clock(new FakeClock())
            .rules(YamlRules.parse("rules: []\n", "empty.yaml"))
            .build();
    return new ResourceConfig(Api.class).register(feature);
  }

  private Response call(String client) {
    return target("limited").request().header("X-Client", client).get();
  }

  @Test
  void annotatedRulesFollowReloadsAndTheRuleSwitches() {
    assertEquals(200, call("a").getStatus());
    assertEquals(429, call("a").getStatus());

    feature.limiter().setRuleShadow("limited", true);
    assertEquals(200, call("a").getStatus(), "shadow: counted, never rejected");
    feature.limiter().setRuleShadow("limited", false);
    feature.limiter().setRuleEnabled("limited", false);
    assertEquals(200, call("a").getStatus(), "disabled");
    feature.limiter().setRuleEnabled("limited", true);
    assertEquals(429, call("a").getStatus());

    feature.limiter().update(YamlRules.parse("headers: [ietf]\nrules: []\n", "reloaded.yaml"));
    Response r = call("b");
    assertEquals(200, r.getStatus());
    assertNull(r.getHeaderString("X-RateLimit-Limit"), "the reload's header families apply");
    assertEquals("\"limited\";q=1;w=3600", r.getHeaderString("RateLimit-Policy"));

    feature.limiter().update(YamlRules.parse("enabled: false\nrules: []\n", "off.yaml"));
    assertEquals(200, call("b").getStatus(), "the kill switch reaches annotated methods");
  }

  @Test
  void anAnnotatedRuleLimitsLocallyAtItsShareWhileTheStoreFails() {
    store.failWith(new IllegalStateException("down"));
    try {
      for (int i = 0; i < 2; i++) {
        Response r = target("local").request().header("X-Client", "c").get();
        assertEquals(200, r.getStatus());
        assertEquals("2", r.getHeaderString("X-RateLimit-Limit"), "the share of 4 over 2");
      }
      assertEquals(429, target("local").request().header("X-Client", "c").get().getStatus());
    } finally {
      store.failWith(null);
    }
  }

  @Test
  void aReloadCannotTakeABoundRulesId() {
    assertThrows(
        IllegalArgumentException.class,
        () ->
            feature
                .limiter()
                .update(
                    YamlRules.parse(
                        "rules: [ { id: limited, tiers: [ { limit: 1, period: 1s } ] } ]\n",
                        "clash.yaml")));
  }

  /** A container the feature does not know. */
  private static final class Unknown implements Container {
    @Override
    public ResourceConfig getConfiguration() {
      return new ResourceConfig();
    }

    @Override
    public ApplicationHandler getApplicationHandler() {
      return null;
    }

    @Override
    public void reload() {}

    @Override
    public void reload(ResourceConfig configuration) {}
  }

  @Test
  void startUpFailsWhenNoClientAddressCanBeFoundAndARuleKeysOnIp() {
    RequestLimiter ip =
        RequestLimiter.builder(new ReferenceCounterStore())
            .rules(
                YamlRules.parse(
                    "rules: [ { id: r, key: [ip], tiers: [ { limit: 1, period: 1s } ] } ]\n",
                    "ip.yaml"))
            .build();
    IllegalStateException e =
        assertThrows(
            IllegalStateException.class,
            () -> new ContainerAccess(null, null, ip).onStartup(new Unknown()));
    assertTrue(e.getMessage().contains("remoteAddress(ctx -> ...)"), e.getMessage());

    RequestLimiter header =
        RequestLimiter.builder(new ReferenceCounterStore())
            .rules(
                YamlRules.parse(
                    "rules: [ { id: r, key: [header:X-Client], tiers: [ { limit: 1, period: 1s } ] } ]\n",
                    "h.yaml"))
            .build();
    new ContainerAccess(null, null, header).onStartup(new Unknown());
    new ContainerAccess(null, ctx -> "192.0.2.1", ip).onStartup(new Unknown());
  }
}
