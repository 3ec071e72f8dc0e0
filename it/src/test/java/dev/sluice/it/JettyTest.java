package dev.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.jaxrs.SluiceFeature;
import dev.sluice.spi.FakeClock;
import dev.sluice.store.inmemory.InMemoryCounterStore;
import dev.sluice.yaml.YamlRules;
import java.net.ServerSocket;
import java.net.URI;
import java.util.List;
import org.eclipse.jetty.server.Server;
import org.glassfish.jersey.jetty.JettyHttpContainerFactory;
import org.glassfish.jersey.server.ResourceConfig;
import org.junit.jupiter.api.Test;

/** Jersey on Jetty 12: an {@code ip} rule limits each client, with no help from the application. */
class JettyTest {

  @Test
  void anIpRuleLimitsEachClientOnJetty() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    SluiceFeature feature =
        SluiceFeature.builder(InMemoryCounterStore.create())
            .clock(new FakeClock())
            .rules(
                YamlRules.parse(
                    AdaptersTest.RULES.replace("/v1/api/hello", "/api/hello"), "rules.yaml"))
            .build();
    ResourceConfig app =
        new ResourceConfig(AdaptersTest.Api.class)
            .register(feature)
            .property("jersey.config.server.wadl.disableWadl", true);
    Server server =
        JettyHttpContainerFactory.createServer(URI.create("http://127.0.0.1:" + port + "/"), app);
    try {
      for (String client : List.of("198.51.100.1", "198.51.100.2")) {
        for (int i = 0; i < 3; i++) {
          assertEquals(200, AdaptersTest.raw(port, "GET", "/api/hello", client), client);
        }
        assertEquals(
            429, AdaptersTest.raw(port, "GET", "/api/hello", client), client + " is limited");
      }
      // Without a forwarding header the client is the peer itself: limited too, not unlimited.
      for (int i = 0; i < 3; i++) {
        assertEquals(200, RawHttp.status(port, List.of("GET /api/hello HTTP/1.1")));
      }
      assertEquals(429, RawHttp.status(port, List.of("GET /api/hello HTTP/1.1")));
    } finally {
      server.stop();
    }
  }
}
