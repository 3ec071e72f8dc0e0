package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.http.RequestLimiter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The starter in a real embedded Tomcat, configured by properties alone, started as an application
 * runs (Spring Boot's test support would turn metrics export off, by an annotation that differs
 * between Boot 3 and 4).
 */
class SluiceStarterTest {

  static ConfigurableApplicationContext app;
  static RequestLimiter limiter;
  private final HttpClient http = HttpClient.newHttpClient();

  @BeforeAll
  static void start() {
    app =
        new SpringApplicationBuilder(TestApp.class)
            .properties(
                "server.port=0",
                "sluice.rules=classpath:sluice-test-rules.yaml",
                "management.endpoints.web.exposure.include=prometheus,sluice,health",
                "management.endpoint.health.show-details=always")
            .run();
    limiter = app.getBean(RequestLimiter.class);
  }

  @AfterAll
  static void stop() {
    app.close();
  }

  HttpResponse<String> get(String path, String client) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://localhost:" + TestApp.port(app) + path));
    if (client != null) {
      b.header("X-Client", client);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void theRulesFromPropertiesLimitEachClientWithHeadersAnd429s() throws Exception {
    for (int i = 0; i < 3; i++) {
      HttpResponse<String> r = get("/api/hello", "limits");
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.headers().firstValue("X-RateLimit-Remaining")).hasValue(String.valueOf(2 - i));
    }
    HttpResponse<String> rejected = get("/api/hello", "limits");
    assertThat(rejected.statusCode()).isEqualTo(429);
    assertThat(rejected.headers().firstValue("Retry-After")).isPresent();
    assertThat(rejected.headers().firstValue("Content-Type"))
        .hasValueSatisfying(t -> assertThat(t).startsWith("application/problem+json"));
    assertThat(rejected.body()).contains("quota-exceeded").contains("api-per-client");
    assertThat(get("/api/hello", "another-client").statusCode()).isEqualTo(200);
  }

  @Test
  void decisionsAreCountedInTheContextsMeterRegistry() throws Exception {
    get("/api/hello", "metrics");
    String scrape = get("/actuator/prometheus", null).body();
    assertThat(scrape).contains("sluice_requests_total{").contains("rule=\"api-per-client\"");
  }

  @Test
  void theActuatorEndpointShowsTheRulesAndKnobsInForce() throws Exception {
    HttpResponse<String> r = get("/actuator/sluice", null);
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body())
        .contains("\"enabled\":true")
        .contains("api-per-client")
        .contains("\"knobs\":{}");
  }

  @Test
  void theHealthEndpointReportsTheStore() throws Exception {
    HttpResponse<String> r = get("/actuator/health/sluice", null);
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body()).contains("\"status\":\"UP\"").contains("in-memory store");
    // Boot 4's Jackson writes a component's keys in name order, "details" before "status".
    assertThat(get("/actuator/health", null).body())
        .containsPattern("\"sluice\":\\{(\"details\":\\{[^}]*},)?\"status\":\"UP\"");
  }

  @Test
  void theLimiterIsABeanWhoseSwitchesTakeEffect() throws Exception {
    limiter.setEnabled(false);
    try {
      for (int i = 0; i < 5; i++) {
        assertThat(get("/api/hello", "switched").statusCode()).isEqualTo(200);
      }
      assertThat(get("/actuator/sluice", null).body()).contains("\"enabled\":false");
    } finally {
      limiter.setEnabled(true);
    }
    limiter.setRuleShadow("api-per-client", true);
    try {
      for (int i = 0; i < 5; i++) {
        assertThat(get("/api/hello", "shadowed").statusCode()).isEqualTo(200);
      }
    } finally {
      limiter.setRuleShadow("api-per-client", false);
    }
    assertThat(get("/api/hello", "shadowed").statusCode()).isEqualTo(429);
  }

  @Test
  void theFilterSitsJustAfterSpringSecuritysChain() {
    assertThat(app.getBean("sluiceFilter", FilterRegistrationBean.class).getOrder()).isEqualTo(-99);
  }
}
