package dev.sluice.jaxrs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.spi.FakeClock;
import dev.sluice.spi.ReferenceCounterStore;
import dev.sluice.yaml.YamlRules;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Application;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.StreamingOutput;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.glassfish.jersey.server.ResourceConfig;
import org.glassfish.jersey.test.JerseyTest;
import org.junit.jupiter.api.Test;

/** A concurrency rule through the JAX-RS feature: slots taken, refused, and always given back. */
class ConcurrencyTest extends JerseyTest {

  private static final long TTL = 30_000;
  private static FakeClock clock;
  private static ReferenceCounterStore store;
  private static volatile CountDownLatch entered;
  private static volatile CountDownLatch gate;

  @Path("/")
  @Produces("application/json")
  public static class Api {
    @GET
    @Path("slow")
    public String slow() throws InterruptedException {
      entered.countDown();
      assertTrue(gate.await(30, TimeUnit.SECONDS));
      return "{}";
    }

    @GET
    @Path("boom")
    public String boom() {
      throw new IllegalStateException("the resource failed");
    }

    @GET
    @Path("stream")
    public Response stream() {
      StreamingOutput body =
          out -> {
            for (int i = 0; i < 100; i++) {
              out.write("0123456789".getBytes(StandardCharsets.US_ASCII));
              out.flush();
            }
          };
      return Response.ok(body).build();
    }
  }

  @Override
  protected Application configure() {
    clock = new FakeClock(1_700_000_000_000L);
    store = new ReferenceCounterStore();
    SluiceFeature feature =
        SluiceFeature.builder(store)
            .clock(clock)
            .remoteAddress(ctx -> "192.0.2.1")
            .rules(
                YamlRules.parse(
                    """
        rules:
          - id: in-flight
            match: { prefix: / }
            key: [header:X-Api-Key]
            concurrency: 2
            slotTtl: 30s
        """,
                    "concurrency.yaml"))
            .build();
    return new ResourceConfig(Api.class).register(feature);
  }

  private long inFlight(String key) {
    long w = clock.millis() / TTL;
    String identity = "header:X-Api-Key=" + key;
    return store.count("in-flight", identity, TTL, w)
        + store.count("in-flight", identity, TTL, w - 1);
  }

  private Response get(String path, String key) {
    return target(path).request().header("X-Api-Key", key).get();
  }

  @Test
  void theThirdConcurrentRequestIsRefusedAndSlotsComeBackWhenResponsesComplete() throws Exception {
    entered = new CountDownLatch(2);
    gate = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      List<Future<Integer>> running = new ArrayList<>();
      for (int i = 0; i < 2; i++) {
        running.add(pool.submit(() -> get("slow", "k1").getStatus()));
      }
      assertTrue(entered.await(30, TimeUnit.SECONDS), "both are in the resource");
      assertEquals(2, inFlight("k1"));
      Response third = get("slow", "k1");
      assertEquals(429, third.getStatus());
      assertEquals("1", third.getHeaderString("Retry-After"));
      String body = third.readEntity(String.class);
      assertTrue(body.contains("Concurrency limit of 2"), body);
      assertTrue(body.contains("\"limitType\":\"concurrency\""), body);
      assertEquals(200, get("stream", "k2").getStatus(), "another key has its own slots");
      gate.countDown();
      for (Future<Integer> f : running) {
        assertEquals(200, f.get(30, TimeUnit.SECONDS));
      }
      assertEquals(0, inFlight("k1"), "both slots given back");
    } finally {
      gate.countDown();
      pool.shutdownNow();
    }
    clock.advanceMillis(1_000);
    entered = new CountDownLatch(1);
    gate = new CountDownLatch(0);
    assertEquals(200, get("slow", "k1").getStatus(), "after Retry-After, a slot is free again");
  }

  @Test
  void aResourceThatThrowsGivesItsSlotBack() {
    for (int i = 0; i < 5; i++) {
      // The in-memory test container hands an unmapped exception to the client; a server sends 500.
      try {
        assertEquals(500, get("boom", "k3").getStatus());
      } catch (jakarta.ws.rs.ProcessingException e) {
        assertTrue(e.getCause() instanceof IllegalStateException, e.toString());
      }
    }
    assertEquals(0, inFlight("k3"), "5 requests through a limit of 2: every slot came back");
  }

  @Test
  void aStreamedResponseGivesItsSlotBackOnceWritten() {
    for (int i = 0; i < 5; i++) {
      Response r = get("stream", "k4");
      assertEquals(200, r.getStatus());
      assertEquals(1_000, r.readEntity(String.class).length());
    }
    assertEquals(0, inFlight("k4"));
  }
}
