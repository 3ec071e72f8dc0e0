package dev.sluice.webflux;

import dev.sluice.http.RequestLimiter;
import dev.sluice.testkit.NonBlocking;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.function.UnaryOperator;
import org.springframework.http.server.reactive.ReactorHttpHandlerAdapter;
import org.springframework.web.reactive.function.server.HandlerStrategies;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.server.WebFilter;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * A WebFlux application on Reactor Netty with the {@link SluiceWebFilter} in front of {@code
 * routes}, on a free loopback port, and raw HTTP/1.1 requests to it. BlockHound is installed for
 * the JVM: a blocking call on an event loop fails the request (and so the test).
 */
final class WebFluxServer implements AutoCloseable {

  static {
    NonBlocking.forbidOn("reactor-http-");
  }

  private final DisposableServer server;

  WebFluxServer(RequestLimiter limiter, RouterFunction<ServerResponse> routes) {
    this(limiter, routes, null);
  }

  /** With {@code first}, if not null, before the Sluice filter. */
  WebFluxServer(RequestLimiter limiter, RouterFunction<ServerResponse> routes, WebFilter first) {
    this(limiter, routes, first, UnaryOperator.identity());
  }

  /**
   * With {@code first}, if not null, before the Sluice filter, on the server {@code server} sets.
   */
  WebFluxServer(
      RequestLimiter limiter,
      RouterFunction<ServerResponse> routes,
      WebFilter first,
      UnaryOperator<HttpServer> server) {
    HandlerStrategies.Builder filters = HandlerStrategies.builder();
    if (first != null) {
      filters.webFilter(first);
    }
    HandlerStrategies strategies = filters.webFilter(new SluiceWebFilter(limiter, 0)).build();
    this.server =
        server
            .apply(HttpServer.create().host("127.0.0.1").port(0))
            .handle(
                new ReactorHttpHandlerAdapter(RouterFunctions.toHttpHandler(routes, strategies)))
            .bindNow();
  }

  int port() {
    return server.port();
  }

  /** The whole response to a request whose request line and headers are {@code head}. */
  String response(List<String> head) throws IOException {
    StringBuilder req = new StringBuilder(head.get(0)).append("\r\nHost: localhost\r\n");
    for (String h : head.subList(1, head.size())) {
      req.append(h).append("\r\n");
    }
    req.append("Connection: close\r\n\r\n");
    try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port())) {
      s.setSoTimeout(10_000);
      OutputStream out = s.getOutputStream();
      out.write(req.toString().getBytes(StandardCharsets.ISO_8859_1));
      out.flush();
      return new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  /** The status of a request whose request line and headers are {@code head}. */
  int status(List<String> head) throws IOException {
    String r = response(head);
    String line =
        new BufferedReader(
                new InputStreamReader(
                    new java.io.ByteArrayInputStream(r.getBytes(StandardCharsets.UTF_8)),
                    StandardCharsets.UTF_8))
            .readLine();
    return line == null ? -1 : Integer.parseInt(line.split(" ", -1)[1]);
  }

  @Override
  public void close() {
    server.disposeNow();
  }
}
