package dev.sluice.it;

import dev.sluice.example.DemoResources;
import dev.sluice.jaxrs.SluiceFeature;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.glassfish.grizzly.http.server.HttpServer;
import org.glassfish.jersey.grizzly2.httpserver.GrizzlyHttpServerFactory;
import org.glassfish.jersey.server.ResourceConfig;

/** The demo API with a given Sluice feature, on Grizzly, on a free loopback port. */
final class App implements AutoCloseable {

  private static final HttpClient HTTP =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(5))
          .build();

  final SluiceFeature feature;
  private final HttpServer server;
  private final AutoCloseable also;
  final int port;

  App(SluiceFeature feature) {
    this(feature, () -> {});
  }

  /** An app that also closes {@code also} (its store, say) when it closes. */
  App(SluiceFeature feature, AutoCloseable also) {
    this.feature = feature;
    this.also = also;
    ResourceConfig app =
        new ResourceConfig(DemoResources.class)
            .register(feature)
            .property("jersey.config.server.wadl.disableWadl", true);
    server =
        GrizzlyHttpServerFactory.createHttpServer(URI.create("http://127.0.0.1:0/"), app, false);
    try {
      server.start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    port = server.getListener("grizzly").getPort();
  }

  HttpResponse<String> get(String path, String... headers) {
    return send("GET", path, headers);
  }

  HttpResponse<String> send(String method, String path, String... headers) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .timeout(Duration.ofSeconds(10))
            .method(method, HttpRequest.BodyPublishers.noBody());
    for (int i = 0; i < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    try {
      return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close() {
    server.shutdownNow();
    feature.close();
    try {
      also.close();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
