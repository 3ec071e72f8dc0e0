package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.testkit.MemcachedServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableWebApplicationContext;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;

/**
 * The {@code sluice} health component on Spring Boot 4, whose health types moved to their own
 * module: the store answers, fails, or the rules decide locally.
 */
class SluiceBoot4HealthTest {

  private final WebApplicationContextRunner runner =
      new WebApplicationContextRunner()
          .withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class))
          .withPropertyValues("sluice.rules=classpath:sluice-test-rules.yaml");

  private static Health health(AssertableWebApplicationContext c) {
    return c.getBean("sluiceHealthIndicator", HealthIndicator.class).health();
  }

  /** A loopback port nothing listens on. */
  private static String deadAddress() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return "127.0.0.1:" + s.getLocalPort();
    }
  }

  private WebApplicationContextRunner memcached(String servers) {
    return runner.withPropertyValues(
        "sluice.store=memcached",
        "sluice.memcached.servers=" + servers,
        "sluice.memcached.connect-timeout=100ms",
        "sluice.memcached.operation-timeout=100ms");
  }

  @Test
  void theInMemoryStoreIsUp() {
    runner.run(
        c -> {
          Health h = health(c);
          assertThat(h.getStatus()).isEqualTo(Status.UP);
          assertThat(h.getDetails().get("store").toString()).startsWith("in-memory store");
        });
  }

  @Test
  void aDeadMemcachedIsDownWithTheErrorAndWhatTheRulesDoMeanwhile() throws Exception {
    memcached(deadAddress())
        .run(
            c -> {
              Health h = health(c);
              assertThat(h.getStatus()).isEqualTo(Status.DOWN);
              assertThat(h.getDetails().get("store").toString()).startsWith("memcached store");
              assertThat(h.getDetails()).containsKey("error");
              assertThat(h.getDetails().get("onStoreFailure"))
                  .isEqualTo(Map.of("allow", List.of("api-per-client")));
            });
  }

  @Test
  void aDeadMemcachedWithEveryRuleLocalIsLocal(@TempDir Path dir) throws Exception {
    Path rules = dir.resolve("rules.yaml");
    Files.writeString(
        rules,
        """
        defaults: { onStoreFailure: local, instances: 2 }
        rules:
          - id: a
            match: { prefix: /a }
            tiers: [ { limit: 3, period: 1m } ]
          - id: b
            match: { prefix: /b }
            tiers: [ { limit: 3, period: 1m } ]
            sync: 200ms
            onStoreFailure: allow
        """);
    memcached(deadAddress())
        .withPropertyValues("sluice.rules=" + rules)
        .run(
            c -> {
              Health h = health(c);
              assertThat(h.getStatus()).isEqualTo(SluiceBoot4HealthIndicator.LOCAL);
              assertThat(h.getDetails().get("onStoreFailure"))
                  .isEqualTo(Map.of("local", List.of("a", "b")));
            });
  }

  @Test
  void aMemcachedThatStopsAnsweringGoesFromUpToDown() {
    try (MemcachedServer server = MemcachedServer.start()) {
      memcached(server.address())
          .run(
              c -> {
                assertThat(health(c).getStatus()).isEqualTo(Status.UP);
                server.kill();
                assertThat(health(c).getStatus()).isEqualTo(Status.DOWN);
              });
    }
  }

  @Test
  void theIndicatorCanBeTurnedOffAndNeedsActuator() {
    runner
        .withPropertyValues("management.health.sluice.enabled=false")
        .run(c -> assertThat(c).hasNotFailed().doesNotHaveBean("sluiceHealthIndicator"));
    runner
        .withClassLoader(new FilteredClassLoader(HealthIndicator.class))
        .run(c -> assertThat(c).hasNotFailed().doesNotHaveBean("sluiceHealthIndicator"));
  }
}
