package dev.sluice.webflux;

import dev.sluice.http.RequestLimiter;
import dev.sluice.spi.CounterStore;
import dev.sluice.store.inmemory.InMemoryCounterStore;
import dev.sluice.store.memcached.MemcachedCounterStore;
import dev.sluice.yaml.YamlRules;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import org.springframework.http.server.reactive.ReactorHttpHandlerAdapter;
import org.springframework.web.reactive.function.server.HandlerStrategies;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.netty.http.server.HttpServer;

/**
 * The WebFlux server {@code docs/bench/reactive.sh} loads with wrk: {@code GET /api/v1/report}
 * answering a small JSON body on Reactor Netty, with the {@link SluiceWebFilter} in front or not.
 * No BlockHound here: it would be measured too.
 *
 * <pre>
 * java -cp CLASSPATH dev.sluice.webflux.BenchServer PORT off|sluice [RULES [MEMCACHED host:port]]
 * </pre>
 *
 * Runs until killed.
 */
final class BenchServer {

  private BenchServer() {}

  public static void main(String[] args) throws Exception {
    int port = Integer.parseInt(args[0]);
    boolean on = args[1].equals("sluice");
    RouterFunction<ServerResponse> routes =
        RouterFunctions.route()
            .GET(
                "/api/v1/report",
                r ->
                    ServerResponse.ok()
                        .header("Content-Type", "application/json")
                        .bodyValue("{\"report\":\"ok\",\"items\":[1,2,3]}"))
            .build();
    HandlerStrategies.Builder strategies = HandlerStrategies.builder();
    if (on) {
      CounterStore store =
          args.length > 3
              ? MemcachedCounterStore.builder()
                  .servers(args[3])
                  .operationTimeout(Duration.ofMillis(200))
                  .build()
              : InMemoryCounterStore.create();
      RequestLimiter limiter =
          RequestLimiter.builder(store).rules(YamlRules.load(Path.of(args[2]))).build();
      strategies.webFilter(new SluiceWebFilter(limiter, 0));
    }
    var server =
        HttpServer.create()
            .host("127.0.0.1")
            .port(port)
            .handle(
                new ReactorHttpHandlerAdapter(
                    RouterFunctions.toHttpHandler(routes, strategies.build())))
            .bindNow();
    System.out.println("listening on " + server.port());
    new CountDownLatch(1).await();
  }
}
