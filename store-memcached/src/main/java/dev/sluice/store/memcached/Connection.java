package dev.sluice.store.memcached;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Supplier;
import net.spy.memcached.ConnectionFactoryBuilder;
import net.spy.memcached.ConnectionObserver;
import net.spy.memcached.MemcachedClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The spymemcached client, replaced by a fresh one as soon as memcached answers on a lost node
 * again.
 *
 * <p>spymemcached reconnects a lost node after a whole second at best, so a memcached restarted in
 * a few milliseconds would leave a second of decisions uncounted. While a node is lost this probes
 * it every {@link #PROBE_MILLIS} ms: a connect and a binary-protocol no-op, which memcached itself
 * must answer. A connect alone is not enough: a proxy in front of a memcached that is down or cut
 * off (a network flap) accepts the connection and closes it, and a client connected to it would
 * count the node as up while every decision on it times out. When the node answers, a new client is
 * connected, and once it has reached that node and every other live one it takes the old one's
 * place (which is shut down a second later, after its operations in flight); the swap brings back
 * that node alone (another lost node the new client reached comes back by its own probe), and the
 * old client reconnecting a node on its own brings back nothing. Calls keep going to the old client
 * until then, so nodes that never failed see no gap. Every {@link #LENIENT_EVERY}th probe of a lost
 * node gives memcached {@link #LENIENT_MILLIS} ms to connect and answer: a memcached too far or too
 * busy for the 20 ms probe still comes back, within about a second. Probes block while they wait,
 * so they run on the store's own probe thread; the wait for the new client and the old one's
 * shutdown are tasks on the store's scheduler.
 */
final class Connection implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(Connection.class);

  static final int PROBE_MILLIS = 20;

  /** How often a node whose breaker opened is probed. */
  static final int STALL_PROBE_MILLIS = 100;

  /** Every this many probes of a lost node, one with {@link #LENIENT_MILLIS}. */
  static final int LENIENT_EVERY = 25;

  /** How long a lenient probe waits for the connect, and then for the answer. */
  static final int LENIENT_MILLIS = 250;

  private static final int REQUEST_MAGIC = 0x80;
  private static final int RESPONSE_MAGIC = 0x81;
  private static final int NOOP_OPCODE = 0x0a;

  /** A binary-protocol no-op: a 24-byte request header with no key, extras or body. */
  private static final byte[] NOOP = new byte[24];

  static {
    NOOP[0] = (byte) REQUEST_MAGIC;
    NOOP[1] = (byte) NOOP_OPCODE;
  }

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
  private final ScheduledExecutorService scheduler;

  /** Where probes run and wait: one daemon thread of this store's, shut down with it. */
  private final ScheduledExecutorService probes =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "sluice-memcached-probe");
            t.setDaemon(true);
            return t;
          });

  private volatile MemcachedClient client;
  private volatile boolean closed;

  Connection(
      Supplier<ConnectionFactoryBuilder> factory,
      List<InetSocketAddress> servers,
      long connectTimeoutMillis,
      Nodes nodes,
      ScheduledExecutorService scheduler)
      throws IOException {
    this.factory = factory;
    this.servers = List.copyOf(servers);
    this.connectTimeoutMillis = connectTimeoutMillis;
    this.nodes = nodes;
    this.scheduler = scheduler;
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
        Wakeups.factory(factory.get().setInitialObservers(List.of(observer)).build()), servers);
  }

  private void probe(SocketAddress node) {
    if (!closed && probing.add(node)) {
      schedule(node, 1);
    }
  }

  /** Probes lost {@code node} for the {@code n}th time in {@link #PROBE_MILLIS} ms. */
  private void schedule(SocketAddress node, int n) {
    try {
      var unused = probes.schedule(() -> check(node, n), PROBE_MILLIS, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      probing.remove(node); // the store is closed
    }
  }

  private void check(SocketAddress node, int n) {
    if (closed || !nodes.isDown(node)) {
      probing.remove(node); // back, or the store is closed
      return;
    }
    if (answers(node, n % LENIENT_EVERY == 0 ? LENIENT_MILLIS : PROBE_MILLIS)) {
      replaceReaching(node);
    } else {
      schedule(node, n + 1);
    }
  }

  /**
   * Probes {@code node} every {@link #STALL_PROBE_MILLIS} ms while {@code wanted} holds, then tells
   * {@code done} whether memcached answered: for a node whose breaker opened while its connection
   * stayed up, so it is tried again as soon as memcached answers.
   */
  void untilAnswers(SocketAddress node, BooleanSupplier wanted, Consumer<Boolean> done) {
    try {
      var unused =
          probes.schedule(
              () -> {
                if (closed || !wanted.getAsBoolean()) {
                  done.accept(false);
                } else if (answers(node, PROBE_MILLIS)) {
                  done.accept(true);
                } else {
                  untilAnswers(node, wanted, done);
                }
              },
              STALL_PROBE_MILLIS,
              TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      done.accept(false); // the store is closed
    }
  }

  /**
   * Whether memcached at {@code node} answers a binary-protocol no-op: connected within {@code
   * millis}, answered within {@code millis} more.
   */
  static boolean answers(SocketAddress node, int millis) {
    try (Socket s = new Socket()) {
      s.connect(node, millis);
      s.setSoTimeout(millis);
      s.setTcpNoDelay(true);
      s.getOutputStream().write(NOOP);
      InputStream in = s.getInputStream();
      // The answer's header starts with the response magic and the request's opcode.
      return in.read() == RESPONSE_MAGIC && in.read() == NOOP_OPCODE;
    } catch (IOException e) {
      return false;
    }
  }

  /**
   * Connects a new client; once it reaches {@code node} and every other live node, it replaces the
   * current one. If it does not within the connect timeout, it is dropped and the probing goes on.
   */
  private void replaceReaching(SocketAddress node) {
    Observer o = new Observer(node);
    MemcachedClient fresh;
    try {
      fresh = open(o);
    } catch (IOException e) {
      schedule(node, 1);
      return;
    }
    o.owner = fresh;
    try {
      // Not reached within the connect timeout: given up.
      var unused =
          scheduler.schedule(
              () -> o.reached.completeExceptionally(new TimeoutException()),
              connectTimeoutMillis,
              TimeUnit.MILLISECONDS);
      o.reached
          .whenCompleteAsync(
              (reached, failed) -> {
                if (failed != null) {
                  fresh.shutdown(0, TimeUnit.MILLISECONDS);
                  schedule(node, 1);
                } else {
                  swap(node, fresh);
                }
              },
              scheduler)
          .exceptionally(e -> null); // swap and shutdown throw nothing a caller could handle
    } catch (RejectedExecutionException e) {
      probing.remove(node); // the application shut its scheduler down
      fresh.shutdown(0, TimeUnit.MILLISECONDS);
    }
  }

  private void swap(SocketAddress node, MemcachedClient fresh) {
    probing.remove(node);
    MemcachedClient old;
    synchronized (this) {
      if (closed) {
        fresh.shutdown(0, TimeUnit.MILLISECONDS);
        return;
      }
      old = client;
      client = fresh;
    }
    nodes.up(node);
    LOG.info("memcached node {} answers again: a new client replaced the old", node);
    // The old client's operations in flight get a second to finish before it is shut down.
    try {
      var unused =
          scheduler.schedule(() -> old.shutdown(0, TimeUnit.MILLISECONDS), 1, TimeUnit.SECONDS);
    } catch (RejectedExecutionException e) {
      old.shutdown(0, TimeUnit.MILLISECONDS);
    }
  }

  @Override
  public void close() {
    MemcachedClient c;
    synchronized (this) {
      closed = true;
      c = client;
    }
    probes.shutdownNow();
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
      if (awaited != null && up.contains(awaited) && reachesEveryLiveNode()) {
        reached.complete(null);
      }
      // The current client reconnecting a lost node on its own brings nothing back: a proxy in
      // front of a memcached cut off accepts, then closes. The node's probe brings it back.
    }

    /**
     * Whether this client is connected to every node but those still lost: a client that took over
     * before reaching a healthy node would fail that node's calls until it did.
     */
    private boolean reachesEveryLiveNode() {
      for (InetSocketAddress s : servers) {
        if (!up.contains(s) && !nodes.isDown(s)) {
          return false;
        }
      }
      return true;
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
