package dev.sluice.webflux;

import dev.sluice.Slots;
import dev.sluice.http.Admission;
import dev.sluice.http.RequestInfo;
import dev.sluice.http.RequestLimiter;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.HttpHeaders;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.springframework.core.Ordered;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.util.ClassUtils;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;
import reactor.netty.Connection;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;

/**
 * Rate limiting for a Spring WebFlux application, with the same rules, keys, headers, 429/503
 * bodies and concurrency slots as the servlet filter, decided without blocking the event loop
 * ({@link RequestLimiter#decideAsync}). An in-memory store answers in the calling thread; memcached
 * and Redis answer in their clients' threads, and on Reactor Netty the rest of the chain then goes
 * on in the request's own event loop. A request's concurrency slots are given back before its
 * response can be complete at the client ({@code ReleaseBeforeResponse}), else when the chain
 * completes, fails or is cancelled.
 *
 * <p>The path the rules match is the request's raw path within the application (below {@code
 * spring.webflux.base-path}); the rules split and decode it as the servlet filter's. The client
 * address is the connection's peer; {@code Forwarded} and {@code X-Forwarded-For} count only from
 * the rules' trusted proxies. On Reactor Netty that holds whatever Spring Boot's forward-headers
 * strategy: the rules read those headers as they came, and the address is the connection's peer
 * when they came (else the request's remote address, a PROXY protocol header's client included).
 * Thread-safe.
 */
public final class SluiceWebFilter implements WebFilter, Ordered {

  private final RequestLimiter limiter;
  private final int order;

  /**
   * A filter deciding by {@code limiter}, at {@code order} among the application's web filters
   * (Spring Security's runs at -100: after it, the rules can key on the authenticated user).
   */
  public SluiceWebFilter(RequestLimiter limiter, int order) {
    this.limiter = Objects.requireNonNull(limiter, "limiter");
    this.order = order;
  }

  /** {@return the limiter: its kill switch, rule switches and {@code update}} */
  public RequestLimiter limiter() {
    return limiter;
  }

  @Override
  public int getOrder() {
    return order;
  }

  @Override
  public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
    return exchange
        .getPrincipal()
        .map(Principal::getName)
        .map(Optional::of)
        .defaultIfEmpty(Optional.empty())
        .flatMap(
            principal -> {
              CompletionStage<Admission> decided =
                  Admission.decideAsync(limiter, new Request(exchange, principal));
              // Cancelling the Mono does not cancel the decision (suppressCancel): cancelled, it
              // would never give back what it took.
              return Mono.fromFuture(
                      onTheRequestsLoop(decided, exchange).toCompletableFuture(), true)
                  // Cancelled (the client hung up): the slots the decision took are given back once
                  // it is made. Once the chain went on, its end gives them back too, and the
                  // second release does nothing.
                  .doOnCancel(
                      () -> {
                        var unused = decided.thenAccept(a -> a.slots().release());
                      });
            })
        .flatMap(
            a -> {
              ServerHttpResponse response = exchange.getResponse();
              a.writeHeaders(response.getHeaders()::set);
              if (a.refused()) {
                byte[] body = a.problem().getBytes(StandardCharsets.UTF_8);
                response.setStatusCode(HttpStatusCode.valueOf(a.status()));
                response.getHeaders().setContentType(MediaType.APPLICATION_PROBLEM_JSON);
                response.getHeaders().setContentLength(body.length);
                return response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
              }
              Slots held = a.slots();
              if (!held.holds()) {
                return chain.filter(exchange);
              }
              // Given back before the response can be complete at the client (its last value, its
              // completion, setComplete), else when the chain ends: before the end goes on to
              // what writes an error's response, or when the client is gone. Once.
              ServerWebExchange releasing =
                  exchange
                      .mutate()
                      .response(ReleaseBeforeResponse.of(exchange.getResponse(), held))
                      .build();
              return chain
                  .filter(releasing)
                  .doOnTerminate(held::release)
                  .doFinally(signal -> held.release());
            });
  }

  /**
   * {@code decided}, completing on the request's own event loop when the server is Reactor Netty:
   * the rest of the chain (the handler, the response) then runs where Reactor Netty expects it, not
   * in the store's thread. Continued from the store's thread, Reactor Netty 1.2 and 1.3 left about
   * one response in a thousand unsent. A decision made at once goes on in the calling thread,
   * except before Reactor Netty 1.3.8 ({@link #queuedRequestsStall}), where it too goes on in a
   * task of its own (about 2 µs a request).
   */
  private static CompletionStage<Admission> onTheRequestsLoop(
      CompletionStage<Admission> decided, ServerWebExchange exchange) {
    if (!REACTOR_NETTY
        || (!ReactorNetty.QUEUED_REQUESTS_STALL && decided.toCompletableFuture().isDone())) {
      return decided;
    }
    return ReactorNetty.onTheLoop(decided, exchange.getRequest());
  }

  private static final Pattern VERSION = Pattern.compile("(\\d{1,9})\\.(\\d{1,9})\\.(\\d{1,9})");

  /**
   * Whether Reactor Netty {@code version} (null when unknown) leaves a connection unread after a
   * request that completes inside its dispatch of queued requests (reactor-netty#4361, fixed in
   * 1.3.8): a request that arrived while the one before it on its connection was still being
   * answered (pipelined, or a keep-alive request racing the end of the previous response), then
   * answered at once. The client's next request on that connection waits until the client gives up.
   * A decision made at once continuing in a task of its own keeps every request that reaches this
   * filter from completing there. A version other than a release's {@code major.minor.patch} counts
   * as unknown.
   */
  static boolean queuedRequestsStall(String version) {
    Matcher v = version == null ? null : VERSION.matcher(version);
    if (v == null || !v.matches()) {
      return true;
    }
    int major = Integer.parseInt(v.group(1));
    int minor = Integer.parseInt(v.group(2));
    int patch = Integer.parseInt(v.group(3));
    return major < 1 || (major == 1 && (minor < 3 || (minor == 3 && patch < 8)));
  }

  /**
   * The version of {@code reactorNettyHttp}, the package of Reactor Netty's HTTP server, from its
   * jar's manifest; null when the package's manifest is not reactor-netty-http's (a shaded jar's,
   * or none on the module path).
   */
  static String reactorNettyVersion(Package reactorNettyHttp) {
    return "reactor-netty-http".equals(reactorNettyHttp.getImplementationTitle())
        ? reactorNettyHttp.getImplementationVersion()
        : null;
  }

  private static final String FORWARDED = "Forwarded";
  private static final String X_FORWARDED_FOR = "X-Forwarded-For";

  private static final boolean REACTOR_NETTY =
      ClassUtils.isPresent(
          "reactor.netty.http.server.HttpServerRequest", SluiceWebFilter.class.getClassLoader());

  /** Reactor Netty's types, loaded only when it is on the class path. */
  private static final class ReactorNetty {

    static final boolean QUEUED_REQUESTS_STALL =
        queuedRequestsStall(reactorNettyVersion(HttpServer.class.getPackage()));

    /** The request's Reactor Netty connection, or null on another server or a mock. */
    private static Connection connection(ServerHttpRequest request) {
      Object nativeRequest;
      try {
        nativeRequest = ServerHttpRequestDecorator.getNativeRequest(request);
      } catch (IllegalArgumentException | IllegalStateException notAServersRequest) {
        return null; // the application's own request type, or a test's mock: no server's inside
      }
      return nativeRequest instanceof Connection connection ? connection : null;
    }

    /**
     * The values of forwarding header {@code name} as they came with the request, or null when it
     * is not Reactor Netty's: Spring's {@code ForwardedHeaderTransformer} (Spring Boot's {@code
     * framework} strategy) removes them from the request it passes on, having trusted them.
     */
    static List<String> sent(ServerHttpRequest request, String name) {
      return connection(request) instanceof HttpServerRequest http
          ? http.requestHeaders().getAll(name)
          : null;
    }

    /**
     * The client's address on Reactor Netty: {@code remote}, the request's remote address (the
     * peer's, or a PROXY protocol header's client), unless the request came with {@code Forwarded}
     * or {@code X-Forwarded-For}. Then the connection's peer: with {@code forwarded(true)} (Spring
     * Boot's {@code native} strategy, the default on cloud platforms) Reactor Netty, and Spring's
     * {@code ForwardedHeaderTransformer} ({@code framework}), took the remote address from those
     * headers, whoever sent them. {@code remote} on another server, or when the peer is no IP
     * address.
     */
    static InetSocketAddress peer(ServerHttpRequest request, InetSocketAddress remote) {
      Connection connection = connection(request);
      if (!(connection instanceof HttpServerRequest http)) {
        return remote;
      }
      HttpHeaders sent = http.requestHeaders();
      if (!sent.contains(FORWARDED) && !sent.contains(X_FORWARDED_FOR)) {
        return remote;
      }
      return connection.channel().remoteAddress() instanceof InetSocketAddress a ? a : remote;
    }

    static CompletionStage<Admission> onTheLoop(
        CompletionStage<Admission> decided, ServerHttpRequest request) {
      Connection connection = connection(request);
      if (connection == null) {
        return decided; // another server, the application's own request type, or a mock
      }
      EventLoop loop = connection.channel().eventLoop();
      return decided.thenApplyAsync(
          a -> a,
          task -> {
            try {
              loop.execute(task);
            } catch (RejectedExecutionException shuttingDown) {
              task.run();
            }
          });
    }
  }

  /** A WebFlux request as the rules see it. */
  private static final class Request implements RequestInfo {
    private final ServerWebExchange exchange;
    private final ServerHttpRequest request;
    private final Optional<String> principal;

    Request(ServerWebExchange exchange, Optional<String> principal) {
      this.exchange = exchange;
      this.request = exchange.getRequest();
      this.principal = principal;
    }

    @Override
    public String method() {
      return request.getMethod().name();
    }

    @Override
    public String path() {
      // Raw (still percent-encoded), within the application: the rules split and decode it.
      return request.getPath().pathWithinApplication().value();
    }

    @Override
    public List<String> headers(String name) {
      if (REACTOR_NETTY && forwarding(name)) {
        // As the peer sent them: the rules trust them only from a trusted proxy.
        List<String> sent = ReactorNetty.sent(request, name);
        if (sent != null) {
          return sent;
        }
      }
      List<String> values = request.getHeaders().get(name);
      return values == null ? List.of() : values;
    }

    @Override
    public Optional<String> header(String name) {
      String first;
      if (REACTOR_NETTY && forwarding(name)) {
        List<String> sent = headers(name);
        first = sent.isEmpty() ? null : sent.get(0);
      } else {
        first = request.getHeaders().getFirst(name);
      }
      return first == null ? Optional.empty() : Optional.of(first.trim());
    }

    private static boolean forwarding(String name) {
      return name.equalsIgnoreCase(FORWARDED) || name.equalsIgnoreCase(X_FORWARDED_FOR);
    }

    @Override
    public Optional<String> remoteAddress() {
      InetSocketAddress remote = request.getRemoteAddress();
      InetSocketAddress peer = REACTOR_NETTY ? ReactorNetty.peer(request, remote) : remote;
      if (peer == null) {
        return Optional.empty();
      }
      return Optional.of(
          peer.getAddress() != null ? peer.getAddress().getHostAddress() : peer.getHostString());
    }

    @Override
    public Optional<String> principal() {
      return principal;
    }

    @Override
    public Optional<Object> attribute(String name) {
      return Optional.ofNullable(exchange.getAttribute(name));
    }
  }
}
