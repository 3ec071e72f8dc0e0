package dev.sluice.it;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** Requests to a demo instance's report route, {@code GET /api/v1/report}, for one API key. */
final class ReportClient {

  private final HttpClient http =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  /** One request to the demo on loopback {@code port} for the client with API key {@code key}. */
  HttpResponse<String> get(int port, String key) {
    try {
      return http.send(
          HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/v1/report"))
              .header("X-Api-Key", key)
              .timeout(Duration.ofSeconds(30))
              .build(),
          HttpResponse.BodyHandlers.ofString());
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** The limit a response describes ({@code X-RateLimit-Limit}); {@code none} without one. */
  static String limit(HttpResponse<String> r) {
    return r.headers().firstValue("X-RateLimit-Limit").orElse("none");
  }
}
