package dev.sluice.bench;

import dev.sluice.store.redis.RedisCounterStore;
import dev.sluice.testkit.RedisServer;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.resource.ClientResources;
import java.time.Duration;

/**
 * The redis-server a benchmark runs against: the one named by {@code -Dsluice.redis=redis://...},
 * or its own on a free port, started from {@code /usr/bin/redis-server} and stopped by {@link
 * #close()}.
 */
final class BenchRedis implements AutoCloseable {

  /** Null when the server is not ours. */
  private final RedisServer server;

  private final String uri;

  private final ClientResources resources =
      ClientResources.builder().ioThreadPoolSize(2).computationThreadPoolSize(2).build();

  private BenchRedis(RedisServer server, String uri) {
    this.server = server;
    this.uri = uri;
  }

  static BenchRedis start() {
    String uri = System.getProperty("sluice.redis");
    if (uri != null) {
      return new BenchRedis(null, uri);
    }
    RedisServer s = RedisServer.start();
    return new BenchRedis(s, s.uri());
  }

  String uri() {
    return uri;
  }

  /** A store on it, as the benchmarks use it: a 50 ms operation timeout. */
  RedisCounterStore store() {
    return RedisCounterStore.builder().uri(uri).operationTimeout(Duration.ofMillis(50)).build();
  }

  /**
   * A plain Lettuce client configured as the store's (two I/O threads, keep-alive): the floor and
   * the peers share it. Shut it down before {@link #close()}.
   */
  RedisClient client() {
    RedisClient client = RedisClient.create(resources, RedisURI.create(uri));
    client.setOptions(
        ClientOptions.builder()
            .socketOptions(SocketOptions.builder().keepAlive(true).build())
            .build());
    return client;
  }

  @Override
  public void close() {
    var unusedShutdown = resources.shutdown();
    if (server != null) {
      server.close();
    }
  }
}
