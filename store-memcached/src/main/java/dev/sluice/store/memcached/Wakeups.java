package dev.sluice.store.memcached;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import net.spy.memcached.ConnectionFactory;
import net.spy.memcached.ConnectionObserver;
import net.spy.memcached.FailureMode;
import net.spy.memcached.HashAlgorithm;
import net.spy.memcached.MemcachedConnection;
import net.spy.memcached.MemcachedNode;
import net.spy.memcached.NodeLocator;
import net.spy.memcached.OperationFactory;
import net.spy.memcached.auth.AuthDescriptor;
import net.spy.memcached.metrics.MetricCollector;
import net.spy.memcached.metrics.MetricType;
import net.spy.memcached.ops.Operation;
import net.spy.memcached.transcoders.Transcoder;

/**
 * One wake-up of spymemcached's I/O thread for the operations a thread queues together.
 * spymemcached wakes its selector for each operation queued, so a decision's three {@code incr}s,
 * or a two-layer sync's thousands, could each cost the I/O thread a turn: a wake-up, a select, a
 * write of its own. A client built on {@link #factory} wakes it once at the end of {@link
 * #together}: the I/O thread then writes every operation queued in one turn. Outside {@link
 * #together} it behaves as spymemcached's own.
 *
 * <p>Public for code that drives spymemcached beside the store (the benchmarks' raw-{@code incr}
 * floor queues the same way).
 */
public final class Wakeups {

  /** spymemcached's meter of operations queued, marked as its own connection marks it. */
  private static final String REQUESTS = "[MEM] Request Rate: All";

  private static final ThreadLocal<Held> HELD = ThreadLocal.withInitial(Held::new);

  private Wakeups() {}

  /**
   * {@code f}, with connections that wake their I/O thread once for the operations queued in {@link
   * #together}.
   *
   * <p>The connections are spymemcached's own {@code MemcachedConnection} but for the wake-up: a
   * {@code createConnection} of {@code f}'s own is not called. With one server, every key goes to
   * it, without asking {@code f}'s locator (which would hash the key).
   *
   * @param f the factory to build a client on, as {@code ConnectionFactoryBuilder} makes it
   * @return a factory for {@code new MemcachedClient(factory, servers)}
   */
  public static ConnectionFactory factory(ConnectionFactory f) {
    return new Factory(f);
  }

  /**
   * Runs {@code queue}, which queues operations on clients of {@link #factory}, and wakes each
   * client's I/O thread once when it returns or throws (and after every 256 operations, so a long
   * run of them never fills a node's queue). {@code queue} must not wait for the answer to an
   * operation it queued: that operation may be written only after it returns.
   *
   * @param queue what queues the operations
   */
  public static void together(Runnable queue) {
    hold();
    try {
      queue.run();
    } finally {
      release();
    }
  }

  /**
   * The most operations a thread queues under a hold before it wakes the I/O threads anyway: far
   * below the 16,384 a node's queue holds by default (a full queue refuses an operation at once).
   */
  static final int WAKE_EVERY = 256;

  /** Holds this thread's wake-ups until the matching {@link #release}; holds nest. */
  static void hold() {
    HELD.get().depth++;
  }

  /**
   * Ends a {@link #hold}, and wakes each connection that queued meanwhile: an inner hold's end too,
   * so what ran inside it may wait for its answers.
   */
  static void release() {
    Held h = HELD.get();
    if (h.depth > 0) {
      h.depth--;
    }
    h.wake();
  }

  /** How deep this thread's holds are; for tests. */
  static int depth() {
    return HELD.get().depth;
  }

  /** One thread's holds: how deep, and the connections to wake. */
  private static final class Held {
    int depth;
    int queued;
    final List<Connection> pending = new ArrayList<>(2);

    /** Counts an operation queued on {@code c} without waking it. */
    void queued(Connection c) {
      if (!pending.contains(c)) {
        pending.add(c);
      }
      if (++queued >= WAKE_EVERY) {
        wake();
      }
    }

    /**
     * Wakes every connection queued on since the last wake-up. A wake-up queues nothing here, so
     * the list is walked as it stands: nothing is allocated per decision.
     */
    void wake() {
      queued = 0;
      for (int i = 0; i < pending.size(); i++) {
        pending.get(i).wake();
      }
      pending.clear();
    }
  }

  /** spymemcached's connection, waking its selector at the end of a hold rather than per op. */
  private static final class Connection extends MemcachedConnection {

    Connection(ConnectionFactory f, List<InetSocketAddress> servers) throws IOException {
      super(
          f.getReadBufSize(),
          f,
          servers,
          f.getInitialObservers(),
          f.getFailureMode(),
          f.getOperationFactory());
    }

    /** As spymemcached's own, but for the selector's wake-up while this thread holds them. */
    @Override
    protected void addOperation(MemcachedNode node, Operation o) {
      Held h = HELD.get();
      if (h.depth <= 0 || !node.isAuthenticated()) {
        super.addOperation(node, o);
        return;
      }
      o.setHandlingNode(node);
      o.initialize();
      node.addOp(o);
      addedQueue.offer(node);
      metrics.markMeter(REQUESTS);
      h.queued(this);
    }

    void wake() {
      selector.wakeup();
    }
  }

  /** The factory given, making {@link Connection}s. */
  private static final class Factory implements ConnectionFactory {
    private final ConnectionFactory f;

    Factory(ConnectionFactory f) {
      this.f = f;
    }

    @Override
    public MemcachedConnection createConnection(List<InetSocketAddress> addrs) throws IOException {
      return new Connection(this, addrs);
    }

    @Override
    public MemcachedNode createMemcachedNode(SocketAddress sa, SocketChannel c, int bufSize) {
      return f.createMemcachedNode(sa, c, bufSize);
    }

    @Override
    public BlockingQueue<Operation> createOperationQueue() {
      return f.createOperationQueue();
    }

    @Override
    public BlockingQueue<Operation> createReadOperationQueue() {
      return f.createReadOperationQueue();
    }

    @Override
    public BlockingQueue<Operation> createWriteOperationQueue() {
      return f.createWriteOperationQueue();
    }

    @Override
    public long getOpQueueMaxBlockTime() {
      return f.getOpQueueMaxBlockTime();
    }

    @Override
    public ExecutorService getListenerExecutorService() {
      return f.getListenerExecutorService();
    }

    @Override
    public boolean isDefaultExecutorService() {
      return f.isDefaultExecutorService();
    }

    @Override
    public NodeLocator createLocator(List<MemcachedNode> nodes) {
      return nodes.size() == 1 ? new OneNodeLocator(nodes.get(0)) : f.createLocator(nodes);
    }

    @Override
    public OperationFactory getOperationFactory() {
      return f.getOperationFactory();
    }

    @Override
    public long getOperationTimeout() {
      return f.getOperationTimeout();
    }

    @Override
    public boolean isDaemon() {
      return f.isDaemon();
    }

    @Override
    public boolean useNagleAlgorithm() {
      return f.useNagleAlgorithm();
    }

    @Override
    public Collection<ConnectionObserver> getInitialObservers() {
      return f.getInitialObservers();
    }

    @Override
    public FailureMode getFailureMode() {
      return f.getFailureMode();
    }

    @Override
    public Transcoder<Object> getDefaultTranscoder() {
      return f.getDefaultTranscoder();
    }

    @Override
    public boolean shouldOptimize() {
      return f.shouldOptimize();
    }

    @Override
    public int getReadBufSize() {
      return f.getReadBufSize();
    }

    @Override
    public HashAlgorithm getHashAlg() {
      return f.getHashAlg();
    }

    @Override
    public long getMaxReconnectDelay() {
      return f.getMaxReconnectDelay();
    }

    @Override
    public AuthDescriptor getAuthDescriptor() {
      return f.getAuthDescriptor();
    }

    @Override
    public int getTimeoutExceptionThreshold() {
      return f.getTimeoutExceptionThreshold();
    }

    @Override
    public MetricType enableMetrics() {
      return f.enableMetrics();
    }

    @Override
    public MetricCollector getMetricCollector() {
      return f.getMetricCollector();
    }

    @Override
    public long getAuthWaitTime() {
      return f.getAuthWaitTime();
    }
  }
}
