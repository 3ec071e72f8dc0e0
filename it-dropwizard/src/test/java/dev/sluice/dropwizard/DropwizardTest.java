package dev.sluice.dropwizard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dropwizard.core.Configuration;
import io.dropwizard.testing.ResourceHelpers;
import io.dropwizard.testing.junit5.DropwizardAppExtension;
import io.dropwizard.testing.junit5.DropwizardExtensionsSupport;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A real Dropwizard 4 application (Jetty 11, Jersey under {@code rootPath: /api/*} in Dropwizard's
 * own {@code ServletContainer} subclass): the feature starts, finds the client's address, and both
 * adapters read a rule's path as the same request path.
 */
@ExtendWith(DropwizardExtensionsSupport.class)
class DropwizardTest {

  static final DropwizardAppExtension<Configuration> APP =
      new DropwizardAppExtension<>(HelloApp.class, ResourceHelpers.resourceFilePath("hello.yml"));

  private final HttpClient http = HttpClient.newHttpClient();

  HttpResponse<String> get(String path, String header, String value) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://localhost:" + APP.getLocalPort() + path));
    if (header != null) {
      b.header(header, value);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void theFeatureMatchesTheFullRequestPathUnderTheRootPath() throws Exception {
    for (int i = 0; i < 3; i++) {
      assertEquals(200, get("/api/hello", "X-Client", "feature").statusCode());
    }
    HttpResponse<String> r = get("/api/hello", "X-Client", "feature");
    assertEquals(429, r.statusCode());
    assertTrue(r.body().contains("feature-hello"), r.body());
  }

  @Test
  void theFilterMatchesTheSamePath() throws Exception {
    for (int i = 0; i < 2; i++) {
      assertEquals(200, get("/api/hello", "X-Filter-Client", "filter").statusCode());
    }
    HttpResponse<String> r = get("/api/hello", "X-Filter-Client", "filter");
    assertEquals(429, r.statusCode());
    assertTrue(r.body().contains("filter-hello"), r.body());
  }

  @Test
  void aRuleWrittenWithoutTheRootPathAppliesInNeither() throws Exception {
    // Both "unrooted" rules allow one request per address: a second would be refused if either
    // adapter read /api/hello as /hello.
    for (int i = 0; i < 2; i++) {
      HttpResponse<String> r = get("/api/hello", "X-Client", "unrooted-" + i);
      assertEquals(200, r.statusCode());
    }
  }

  @Test
  void theFeatureFindsTheClientsAddressThroughTheServletRequest() throws Exception {
    assertEquals(200, get("/api/address", null, null).statusCode());
    assertEquals(200, get("/api/address", null, null).statusCode());
    HttpResponse<String> r = get("/api/address", "X-Client", "another");
    assertEquals(429, r.statusCode());
    assertTrue(r.body().contains("feature-per-address"), r.body());
  }
}
