package dev.sluice.bench;

import dev.sluice.store.memcached.MemcachedCounterStore;
import dev.sluice.testkit.MemcachedServer;
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

  /**
   * A plain spymemcached client on {@code servers}, configured as the store's (binary protocol,
   * consistent hashing by {@link dev.sluice.store.memcached.KeyHash}, no Nagle, failing fast, one
   * wake-up of its I/O thread for the operations queued in {@link
   * dev.sluice.store.memcached.Wakeups#together}): the floor a decision is measured against. Waits
   * up to 5 s for its connections.
   */
  static net.spy.memcached.MemcachedClient raw(String servers) throws java.io.IOException {
    java.util.List<java.net.InetSocketAddress> nodes =
        net.spy.memcached.AddrUtil.getAddresses(servers);
    java.util.concurrent.CountDownLatch up = new java.util.concurrent.CountDownLatch(nodes.size());
    net.spy.memcached.MemcachedClient client =
        new net.spy.memcached.MemcachedClient(
            dev.sluice.store.memcached.Wakeups.factory(
                new net.spy.memcached.ConnectionFactoryBuilder()
                    .setProtocol(net.spy.memcached.ConnectionFactoryBuilder.Protocol.BINARY)
                    .setLocatorType(net.spy.memcached.ConnectionFactoryBuilder.Locator.CONSISTENT)
                    .setHashAlg(dev.sluice.store.memcached.KeyHash.INSTANCE)
                    .setFailureMode(net.spy.memcached.FailureMode.Cancel)
                    .setUseNagleAlgorithm(false)
                    .setDaemon(true)
                    .setInitialObservers(
                        java.util.List.of(
                            new net.spy.memcached.ConnectionObserver() {
                              @Override
                              public void connectionEstablished(
                                  java.net.SocketAddress sa, int reconnectCount) {
                                up.countDown();
                              }

                              @Override
                              public void connectionLost(java.net.SocketAddress sa) {}
                            }))
                    .build()),
            nodes);
    try {
      up.await(5, java.util.concurrent.TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return client;
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
