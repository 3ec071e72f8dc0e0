package dev.sluice.store.memcached;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import net.spy.memcached.ConnectionFactoryBuilder;
import net.spy.memcached.ConnectionObserver;
import net.spy.memcached.MemcachedClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The spymemcached client, replaced by a fresh one as soon as a lost node accepts connections
 * again.
 *
 * <p>spymemcached reconnects a lost node after a whole second at best, so a memcached restarted in
 * a few milliseconds would leave a second of decisions uncounted. While a node is lost this probes
 * it every {@link #PROBE_MILLIS} ms with a plain TCP connect; when it answers, a new client is
 * connected, and once it has reached that node it takes the old one's place (which is shut down
 * after its operations in flight). Calls keep going to the old client until then, so nodes that
 * never failed see no gap. The probe runs on one daemon thread that exists only while a node is
 * lost.
 */
final class Connection implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(Connection.class);

  static final int PROBE_MILLIS = 20;

  /** What the store does when a node is lost or reached. */
  interface Nodes {
    void up(SocketAddress node);

    void down(SocketAddress node);

    boolean isDown(SocketAddress node);
  }

  private final Supplier<ConnectionFactoryBuilder> factory;
  private final List<InetSocketAddress> servers;
  private final long connectTimeoutMillis;
  private final Nodes nodes;
  private final AtomicInteger opened = new AtomicInteger();
  private final Set<SocketAddress> probing = ConcurrentHashMap.newKeySet();
  private final ScheduledThreadPoolExecutor prober;
  private volatile MemcachedClient client;
  private volatile boolean closed;

  Connection(
      Supplier<ConnectionFactoryBuilder> factory,
      List<InetSocketAddress> servers,
      long connectTimeoutMillis,
      Nodes nodes)
      throws IOException {
    this.factory = factory;
    this.servers = List.copyOf(servers);
    this.connectTimeoutMillis = connectTimeoutMillis;
    this.nodes = nodes;
    this.prober =
        new ScheduledThreadPoolExecutor(
            1,
            r -> {
              Thread t = new Thread(r, "sluice-memcached-reconnect");
              t.setDaemon(true);
              return t;
            });
    prober.setKeepAliveTime(10, TimeUnit.SECONDS);
    prober.allowCoreThreadTimeOut(true);
    prober.setRemoveOnCancelPolicy(true);
    Observer first = new Observer(null);
    this.client = open(first);
    first.owner = client;
    // Operations for a node not yet connected are cancelled (FailureMode.Cancel): wait, within
    // bounds, for the first connections so a new store does not fail its first requests.
    try {
      first.all.await(connectTimeoutMillis, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  MemcachedClient client() {
    return client;
  }

  /** Connections opened, reconnections and replacement clients included. */
  int opened() {
    return opened.get();
  }

  private MemcachedClient open(Observer observer) throws IOException {
    return new MemcachedClient(
        factory.get().setInitialObservers(List.of(observer)).build(), servers);
  }

  private void probe(SocketAddress node) {
    if (!closed && probing.add(node)) {
      schedule(node);
    }
  }

  private void schedule(SocketAddress node) {
    try {
      var unused = prober.schedule(() -> check(node), PROBE_MILLIS, TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      probing.remove(node); // closed
    }
  }

  private void check(SocketAddress node) {
    if (closed || !nodes.isDown(node)) {
      probing.remove(node); // spymemcached reconnected it first, or the store is closed
      return;
    }
    if (accepts(node) && replaceReaching(node)) {
      probing.remove(node);
      return;
    }
    schedule(node);
  }

  private static boolean accepts(SocketAddress node) {
    try (Socket s = new Socket()) {
      s.connect(node, PROBE_MILLIS);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /** Connects a new client; once it reaches {@code node}, it replaces the current one. */
  private boolean replaceReaching(SocketAddress node) {
    Observer o = new Observer(node);
    MemcachedClient fresh;
    try {
      fresh = open(o);
    } catch (IOException e) {
      return false;
    }
    o.owner = fresh;
    try {
      o.reached.get(connectTimeoutMillis, TimeUnit.MILLISECONDS);
    } catch (TimeoutException | java.util.concurrent.ExecutionException e) {
      fresh.shutdown(0, TimeUnit.MILLISECONDS);
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      fresh.shutdown(0, TimeUnit.MILLISECONDS);
      return false;
    }
    MemcachedClient old;
    synchronized (this) {
      if (closed) {
        fresh.shutdown(0, TimeUnit.MILLISECONDS);
        return true;
      }
      old = client;
      client = fresh;
    }
    o.up.forEach(nodes::up);
    LOG.info("memcached node {} accepts connections again: a new client replaced the old", node);
    // Off the probe thread: the old client's shutdown waits up to a second for its operations.
    Thread t = new Thread(() -> old.shutdown(1, TimeUnit.SECONDS), "sluice-memcached-retire");
    t.setDaemon(true);
    t.start();
    return true;
  }

  @Override
  public void close() {
    MemcachedClient c;
    synchronized (this) {
      closed = true;
      c = client;
    }
    prober.shutdownNow();
    c.shutdown(1, TimeUnit.SECONDS);
  }

  /** One client's connection events; they reach the store only while it is the current client. */
  private final class Observer implements ConnectionObserver {
    private final SocketAddress awaited;
    private final CompletableFuture<Void> reached = new CompletableFuture<>();
    private final CountDownLatch all = new CountDownLatch(servers.size());
    private final Set<SocketAddress> up = ConcurrentHashMap.newKeySet();
    private volatile MemcachedClient owner;

    Observer(SocketAddress awaited) {
      this.awaited = awaited;
    }

    @Override
    public void connectionEstablished(SocketAddress node, int reconnectCount) {
      opened.incrementAndGet();
      up.add(node);
      all.countDown();
      if (node.equals(awaited)) {
        reached.complete(null);
      }
      if (owner == client) {
        nodes.up(node);
      }
    }

    @Override
    public void connectionLost(SocketAddress node) {
      up.remove(node);
      if (owner == client && !closed) {
        nodes.down(node);
        probe(node);
      }
    }
  }
}
