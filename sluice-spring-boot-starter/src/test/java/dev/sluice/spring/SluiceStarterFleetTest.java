package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.http.RequestLimiter;
import dev.sluice.testkit.Memcached;
import dev.sluice.testkit.MemcachedServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Two instances of one Spring Boot application sharing a real memcached through {@code
 * sluice.store=memcached}, their rules in a file that both watch.
 */
@Memcached
class SluiceStarterFleetTest {

  @TempDir static Path dir;
  static MemcachedServer memcached;
  static Path rules;
  static final List<ConfigurableApplicationContext> apps = new ArrayList<>();
  final HttpClient http = HttpClient.newHttpClient();

  @BeforeAll
  static void start(MemcachedServer started) throws Exception {
    memcached = started;
    rules = dir.resolve("rules.yaml");
    Files.writeString(rules, rulesWithLimit(3));
    for (int i = 0; i < 2; i++) {
      apps.add(
          new SpringApplicationBuilder(TestApp.class)
              .properties(
                  "server.port=0",
                  "sluice.rules=" + rules,
                  "sluice.rules-check-interval=100ms",
                  "sluice.store=memcached",
                  "sluice.memcached.servers=" + memcached.address(),
                  "sluice.memcached.operation-timeout=500ms")
              .run());
    }
  }

  @AfterAll
  static void stop() {
    apps.forEach(ConfigurableApplicationContext::close);
  }

  static String rulesWithLimit(int limit) {
    return "rules:\n"
        + "  - id: api-per-client\n"
        + "    match: { prefix: /api }\n"
        + "    key: [header:X-Client]\n"
        + "    tiers: [ { limit: "
        + limit
        + ", period: 1m } ]\n";
  }

  int status(int app, String client) throws Exception {
    int port = TestApp.port(apps.get(app));
    HttpRequest r =
        HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/api/hello"))
            .header("X-Client", client)
            .build();
    return http.send(r, HttpResponse.BodyHandlers.discarding()).statusCode();
  }

  @Test
  void theInstancesShareOneLimitAndFollowTheRulesFile() throws Exception {
    assertThat(status(0, "fleet")).isEqualTo(200);
    assertThat(status(1, "fleet")).isEqualTo(200);
    assertThat(status(0, "fleet")).isEqualTo(200);
    assertThat(status(1, "fleet")).isEqualTo(429);
    assertThat(status(0, "fleet")).isEqualTo(429);

    Files.writeString(rules, rulesWithLimit(5));
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    for (ConfigurableApplicationContext app : apps) {
      RequestLimiter limiter = app.getBean(RequestLimiter.class);
      while (limiter.rules().rule("api-per-client").orElseThrow().tiers().get(0).limit() != 5) {
        assertThat(System.nanoTime()).as("the edit is read within 10 s").isLessThan(deadline);
        Thread.sleep(20);
      }
    }
    assertThat(status(1, "fleet")).isEqualTo(200);
    assertThat(status(0, "fleet")).isEqualTo(200);
    assertThat(status(1, "fleet")).isEqualTo(429);
  }
}
