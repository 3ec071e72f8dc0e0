package dev.sluice.spring;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/** Requests with HTTP basic credentials, one client address for all. */
final class SecuredClient {
  private final HttpClient http = HttpClient.newHttpClient();
  private final int port;

  SecuredClient(int port) {
    this.port = port;
  }

  int status(String user, String password) throws Exception {
    String basic =
        Base64.getEncoder()
            .encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
    HttpRequest r =
        HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/api/hello"))
            .header("Authorization", "Basic " + basic)
            .build();
    return http.send(r, HttpResponse.BodyHandlers.discarding()).statusCode();
  }
}
