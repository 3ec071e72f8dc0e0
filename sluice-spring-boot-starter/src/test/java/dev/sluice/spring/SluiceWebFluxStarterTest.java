package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.testkit.HttpConnection;
import dev.sluice.testkit.MemcachedServer;
import dev.sluice.testkit.NonBlocking;
import dev.sluice.testkit.RedisServer;
import dev.sluice.webflux.SluiceWebFilter;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A WebFlux application with the starter alone, BlockHound installed: limited from the same
 * properties as a servlet one, in memory, on memcached and on Redis, with the sluice_ metrics at
 * /actuator/prometheus. Boot 3.5 serves it with the test class path's Tomcat, Boot 4 with Reactor
 * Netty ({@code SluiceWebFilterTest} runs the filter on Reactor Netty 1.2).
 */
class SluiceWebFluxStarterTest {

  static {
    NonBlocking.forbidOn("reactor-http-");
  }

  private final HttpClient http = HttpClient.newHttpClient();

  private static ConfigurableApplicationContext start(String... properties) {
    List<String> all = new ArrayList<>(List.of(properties));
    all.add("server.port=0");
    all.add("sluice.rules=classpath:sluice-test-rules.yaml");
    all.add("management.endpoints.web.exposure.include=prometheus,sluice,health");
    return new SpringApplicationBuilder(ReactiveTestApp.class)
        .web(WebApplicationType.REACTIVE)
        .properties(all.toArray(new String[0]))
        .run();
  }

  private HttpResponse<String> get(ConfigurableApplicationContext app, String path, String client)
      throws Exception {
    int port = TestApp.port(app);
    // A server that never answers fails the test instead of hanging the build.
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
            .timeout(Duration.ofSeconds(30));
    if (client != null) {
      b.header("X-Client", client);
    }
    try {
      return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    } catch (HttpTimeoutException e) {
      printThreads("no answer in 30 s");
      throw e;
    }
  }

  /** Where a request stopped: every thread's stack, in the test's output. */
  private static void printThreads(String why) {
    StringBuilder dump = new StringBuilder(why).append("; the threads:\n");
    Thread.getAllStackTraces()
        .forEach(
            (thread, stack) -> {
              dump.append('"').append(thread.getName()).append("\" ");
              dump.append(thread.getState()).append('\n');
              for (StackTraceElement frame : stack) {
                dump.append("    at ").append(frame).append('\n');
              }
            });
    System.out.println(dump);
  }

  @Test
  void aWebFluxApplicationIsLimitedInMemory() throws Exception {
    try (ConfigurableApplicationContext app = start()) {
      assertThat(app.getBeansOfType(SluiceWebFilter.class)).hasSize(1);
      assertLimited(app);
    }
  }

  @Test
  void aWebFluxApplicationIsLimitedOnMemcached() throws Exception {
    try (MemcachedServer memcached = MemcachedServer.start();
        ConfigurableApplicationContext app =
            start(
                "sluice.store=memcached",
                "sluice.memcached.servers=" + memcached.address(),
                "sluice.memcached.operation-timeout=1s")) {
      assertLimited(app);
      assertEveryRequestAnswered(app);
      assertQueuedRequestsAnswered(app);
      assertThat(get(app, "/actuator/prometheus", null).body()).contains("sluice_store_calls");
    }
  }

  @Test
  void aWebFluxApplicationIsLimitedOnRedis() throws Exception {
    try (RedisServer redis = RedisServer.start();
        ConfigurableApplicationContext app =
            start(
                "sluice.store=redis",
                "sluice.redis.uri=" + redis.uri(),
                "sluice.redis.operation-timeout=1s")) {
      assertLimited(app);
      assertEveryRequestAnswered(app);
      assertQueuedRequestsAnswered(app);
      assertThat(get(app, "/actuator/prometheus", null).body()).contains("sluice_store_calls");
    }
  }

  /**
   * Many requests that the store decides, each answered: on Reactor Netty, a chain continued in the
   * store client's thread left about one response in a thousand unsent.
   */
  private void assertEveryRequestAnswered(ConfigurableApplicationContext app) throws Exception {
    for (int i = 0; i < 500; i++) {
      assertThat(get(app, "/api/hello", "client-" + i).statusCode()).isEqualTo(200);
    }
  }

  /**
   * A request that arrives while the one before it on its connection waits for the store, and that
   * no rule matches, is answered, and so is the next request on that connection. Reactor Netty
   * before 1.3.8 (Spring Boot 4.0.7's is 1.3.6) left the connection unread after a request that
   * completed inside its dispatch of queued requests (reactor-netty#4361), the next request waiting
   * until the client gave up. On Spring Boot 3.5 this application runs on Tomcat.
   */
  private static void assertQueuedRequestsAnswered(ConfigurableApplicationContext app)
      throws Exception {
    for (int i = 0; i < 10; i++) {
      try (HttpConnection c = new HttpConnection(TestApp.port(app), Duration.ofSeconds(10))) {
        c.send(
            HttpConnection.get("/api/hello", "X-Client: queued-" + i),
            HttpConnection.get("/hello"));
        assertThat(c.next()).startsWith("HTTP/1.1 200").endsWith("hello");
        assertThat(c.next()).startsWith("HTTP/1.1 200").endsWith("hello");
        c.send(HttpConnection.get("/hello"));
        assertThat(c.next()).startsWith("HTTP/1.1 200").endsWith("hello");
      } catch (SocketTimeoutException e) {
        printThreads("no answer in 10 s on a connection with queued requests");
        throw e;
      }
    }
  }

  private void assertLimited(ConfigurableApplicationContext app) throws Exception {
    for (int i = 0; i < 3; i++) {
      HttpResponse<String> r = get(app, "/api/hello", "reactive");
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.body()).isEqualTo("hello");
      assertThat(r.headers().firstValue("X-RateLimit-Remaining")).hasValue(String.valueOf(2 - i));
    }
    HttpResponse<String> rejected = get(app, "/api/hello", "reactive");
    assertThat(rejected.statusCode()).isEqualTo(429);
    assertThat(rejected.headers().firstValue("Retry-After")).isPresent();
    assertThat(rejected.headers().firstValue("Content-Type"))
        .hasValueSatisfying(t -> assertThat(t).startsWith("application/problem+json"));
    assertThat(rejected.body()).contains("quota-exceeded").contains("api-per-client");
    assertThat(get(app, "/api/hello", "another-client").statusCode()).isEqualTo(200);
    String scrape = get(app, "/actuator/prometheus", null).body();
    assertThat(scrape).contains("sluice_requests_total{").contains("rule=\"api-per-client\"");
  }
}
