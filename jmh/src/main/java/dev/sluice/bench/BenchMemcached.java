package dev.sluice.bench;

import dev.sluice.store.memcached.MemcachedCounterStore;
import dev.sluice.store.memcached.MemcachedServer;
import java.time.Duration;

/**
 * The memcached a benchmark runs against: the one named by {@code -Dsluice.memcached=host:port}, or
 * its own, started when the binary is on the PATH and stopped by {@link #close()}.
 */
final class BenchMemcached implements AutoCloseable {

  /** Null when the memcached is not ours. */
  private final MemcachedServer server;

  private final String address;

  private BenchMemcached(MemcachedServer server, String address) {
    this.server = server;
    this.address = address;
  }

  static BenchMemcached start() {
    String address = System.getProperty("sluice.memcached");
    if (address != null) {
      return new BenchMemcached(null, address);
    }
    MemcachedServer s = MemcachedServer.start();
    return new BenchMemcached(s, s.address());
  }

  String address() {
    return address;
  }

  /** A store on it, as the benchmarks use it: a 50 ms operation timeout. */
  MemcachedCounterStore store() {
    return MemcachedCounterStore.builder()
        .servers(address)
        .operationTimeout(Duration.ofMillis(50))
        .build();
  }

  /** The server's reads and writes so far, or 0 when it is not ours (its stats are not read). */
  long operations() {
    return server == null ? 0 : server.operations();
  }

  boolean own() {
    return server != null;
  }

  @Override
  public void close() {
    if (server != null) {
      server.close();
    }
  }
}
