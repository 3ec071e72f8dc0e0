package dev.sluice.jaxrs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.spi.FakeClock;
import dev.sluice.spi.ReferenceCounterStore;
import dev.sluice.yaml.YamlRules;
import jakarta.annotation.Priority;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.container.PreMatching;
import jakarta.ws.rs.core.Application;
import org.glassfish.jersey.server.ResourceConfig;
import org.glassfish.jersey.test.JerseyTest;
import org.junit.jupiter.api.Test;

/**
 * Requests are followed to their end only while the rules may hold slots, and a request that began
 * before such rules came into force still gives its slot back.
 */
class SlotReleaseTest extends JerseyTest {

  private static final long TTL = 30_000;
  private static final String RATE_ONLY =
      """
      rules:
        - id: per-key
          match: { prefix: / }
          key: [header:X-Api-Key]
          tiers: [ { limit: 1000, period: 1m } ]
      """;
  private static final String WITH_CONCURRENCY =
      """
      rules:
        - id: in-flight
          match: { prefix: / }
          key: [header:X-Api-Key]
          concurrency: 1
          slotTtl: 30s
      """;

  private static FakeClock clock;
  private static ReferenceCounterStore store;
  private static SluiceFeature feature;

  @Path("/")
  @Produces("application/json")
  public static class Api {
    @GET
    @Path("ok")
    public String ok() {
      return "{}";
    }
  }

  /** Switches the rules while a request is already under way, before Sluice decides it. */
  @PreMatching
  @Priority(Priorities.AUTHENTICATION)
  public static class SwitchRules implements ContainerRequestFilter {
    @Override
    public void filter(ContainerRequestContext ctx) {
      if (ctx.getHeaderString("X-Switch") != null) {
        feature.limiter().update(YamlRules.parse(WITH_CONCURRENCY, "switched.yaml"));
      }
    }
  }

  @Override
  protected Application configure() {
    clock = new FakeClock(1_700_000_000_000L);
    store = new ReferenceCounterStore();
    feature =
        SluiceFeature.builder(store)
            .clock(clock)
            .remoteAddress(ctx -> "192.0.2.1")
            .rules(YamlRules.parse(RATE_ONLY, "rate.yaml"))
            .build();
    return new ResourceConfig(Api.class).register(SwitchRules.class).register(feature);
  }

  private long inFlight(String key) {
    long w = clock.millis() / TTL;
    String identity = "header:X-Api-Key=" + key;
    return store.count("in-flight", identity, TTL, w)
        + store.count("in-flight", identity, TTL, w - 1);
  }

  @Test
  void aRequestUnderWayWhenConcurrencyRulesArriveGivesItsSlotBack() {
    assertFalse(feature.limiter().mayHoldSlots(), "rate limits alone hold no slots");
    int status =
        target("ok").request().header("X-Api-Key", "k1").header("X-Switch", "1").get().getStatus();
    assertEquals(200, status);
    assertTrue(feature.limiter().mayHoldSlots(), "a concurrency rule may hold slots");
    assertEquals(0, inFlight("k1"), "the slot of the request that was not followed came back");
    for (int i = 0; i < 3; i++) {
      assertEquals(200, target("ok").request().header("X-Api-Key", "k1").get().getStatus());
      assertEquals(0, inFlight("k1"), "a followed request gives its slot back");
    }
  }
}
