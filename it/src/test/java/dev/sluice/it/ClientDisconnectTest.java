package dev.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.jaxrs.SluiceFeature;
import dev.sluice.store.inmemory.InMemoryCounterStore;
import dev.sluice.yaml.YamlRules;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A client that disconnects while its request holds a concurrency slot, on Jersey over Grizzly: the
 * slot comes back when the resource completes, although nobody reads the response.
 */
class ClientDisconnectTest {

  @Test
  void aClientThatDisconnectsMidRequestGivesItsSlotBack() throws Exception {
    // The first decision is the raw request's: the test polls only once it holds the slot (a poll
    // racing it could take the slot first and have it refused).
    CompletableFuture<Boolean> first = new CompletableFuture<>();
    SluiceFeature feature =
        SluiceFeature.builder(InMemoryCounterStore.create())
            .rules(
                YamlRules.parse(
                    """
                    rules:
                      - id: one-in-flight
                        match: { path: /api/v1/slow }
                        key: [header:X-Api-Key]
                        concurrency: 1
                    """,
                    "rules.yaml"))
            .listener((rules, d, nanos) -> first.complete(d.allowed()))
            .build();
    try (App app = new App(feature)) {
      try (Socket socket = new Socket(java.net.InetAddress.getLoopbackAddress(), app.port)) {
        socket
            .getOutputStream()
            .write(
                "GET /api/v1/slow?ms=1000 HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: gone\r\n\r\n"
                    .getBytes(StandardCharsets.US_ASCII));
        socket.getOutputStream().flush();
        assertTrue(first.get(20, TimeUnit.SECONDS), "the first request was allowed");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (app.get("/api/v1/slow?ms=0", "X-Api-Key", "gone").statusCode() != 429) {
          assertTrue(System.nanoTime() < deadline, "the first request never held its slot");
          Thread.sleep(20);
        }
        // Gone at once, with a reset, while the resource still runs.
        socket.setSoLinger(true, 0);
      }
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      int status;
      // The deny cache answers a refused key for Retry-After (1 s); the resource ends after 1 s.
      while ((status = app.get("/api/v1/slow?ms=0", "X-Api-Key", "gone").statusCode()) != 200) {
        assertEquals(429, status);
        assertTrue(System.nanoTime() < deadline, "the slot never came back");
        Thread.sleep(50);
      }
    }
  }
}
