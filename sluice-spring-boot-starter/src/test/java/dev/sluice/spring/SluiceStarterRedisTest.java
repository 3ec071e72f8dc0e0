package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.testkit.RedisServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.mock.env.MockEnvironment;

/**
 * {@code sluice.store=redis}: two instances share one limit on a real redis-server, one configured
 * by {@code sluice.redis.uri}, the other by Spring Data's {@code spring.data.redis.host} and {@code
 * port} alone.
 */
class SluiceStarterRedisTest {

  @TempDir static Path dir;
  static RedisServer redis;
  static final List<ConfigurableApplicationContext> apps = new ArrayList<>();
  final HttpClient http = HttpClient.newHttpClient();

  @BeforeAll
  static void start() throws Exception {
    redis = RedisServer.start();
    Path rules = dir.resolve("rules.yaml");
    Files.writeString(rules, SluiceStarterFleetTest.rulesWithLimit(3));
    apps.add(
        new SpringApplicationBuilder(TestApp.class)
            .properties(
                "server.port=0",
                "sluice.rules=" + rules,
                "sluice.store=redis",
                "sluice.redis.uri=" + redis.uri(),
                "sluice.redis.operation-timeout=500ms")
            .run());
    apps.add(
        new SpringApplicationBuilder(TestApp.class)
            .properties(
                "server.port=0",
                "sluice.rules=" + rules,
                "sluice.store=redis",
                "spring.data.redis.host=127.0.0.1",
                "spring.data.redis.port=" + redis.port(),
                "sluice.redis.operation-timeout=500ms")
            .run());
  }

  @AfterAll
  static void stop() {
    apps.forEach(ConfigurableApplicationContext::close);
    redis.close();
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
  void theInstancesShareOneLimitInRedis() throws Exception {
    assertThat(status(0, "fleet")).isEqualTo(200);
    assertThat(status(1, "fleet")).isEqualTo(200);
    assertThat(status(0, "fleet")).isEqualTo(200);
    assertThat(status(1, "fleet")).isEqualTo(429);
    assertThat(status(0, "fleet")).isEqualTo(429);
  }

  @Test
  void springDataRedisPropertiesNameTheServerWhenSluiceRedisDoesNot() {
    SluiceProperties.Redis own = new SluiceProperties.Redis();
    MockEnvironment sentinel =
        new MockEnvironment()
            .withProperty("spring.data.redis.sentinel.master", "mymaster")
            .withProperty("spring.data.redis.sentinel.nodes", "s1:26379,s2:26379")
            .withProperty("spring.data.redis.password", "secret")
            .withProperty("spring.data.redis.connect-timeout", "3s");
    assertThat(RedisSettings.of(own, sentinel))
        .containsEntry("uri", "redis-sentinel://s1:26379,s2:26379#mymaster")
        .containsEntry("password", "secret")
        .containsEntry("connectTimeout", "3000ms")
        .doesNotContainKey("username");
    MockEnvironment cluster =
        new MockEnvironment()
            .withProperty("spring.data.redis.cluster.nodes[0]", "n1:7000")
            .withProperty("spring.data.redis.cluster.nodes[1]", "n2:7001")
            .withProperty("spring.data.redis.ssl.enabled", "true");
    assertThat(RedisSettings.of(own, cluster))
        .containsEntry("cluster", "n1:7000,n2:7001")
        .containsEntry("tls", "true");
    assertThat(
            RedisSettings.of(
                own, new MockEnvironment().withProperty("spring.data.redis.database", "2")))
        .containsEntry("uri", "redis://localhost:6379/2");
    own.setUri("rediss://cache:6380");
    own.setPrefix("shop");
    assertThat(
            RedisSettings.of(
                own, new MockEnvironment().withProperty("spring.data.redis.host", "other")))
        .isEqualTo(Map.of("uri", "rediss://cache:6380", "prefix", "shop"));
  }
}
