package dev.sluice.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy on a free loopback port in front of a store, for fault tests. Each connection it
 * accepts is passed to {@code 127.0.0.1:targetPort}, bytes both ways, and can be made slow ({@link
 * #delay}, {@link #holdNewConnections}) or broken: {@link #refuse} (connects refused, as from a
 * partitioned host), {@link #cut} (connects accepted and closed at once, as when a network flaps),
 * {@link #dropConnections} (open connections closed, new ones passed). {@link #restore} passes
 * connections through again. A connection the target refuses is closed. Close it when done.
 */
public final class TcpProxy implements AutoCloseable {

  private final int port;
  private final int targetPort;
  private final List<Socket> sockets = new ArrayList<>();
  private final AtomicInteger accepted = new AtomicInteger();
  private volatile ServerSocket server;
  private volatile Thread acceptor;
  private volatile long delayMillis;
  private volatile long holdMillis;
  private volatile boolean cut;
  private volatile boolean open = true;

  private TcpProxy(int targetPort) throws IOException {
    this.targetPort = targetPort;
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    this.port = server.getLocalPort();
    startAccepting(server);
  }

  /** A proxy to {@code 127.0.0.1:targetPort}, passing bytes through as they come. */
  public static TcpProxy to(int targetPort) {
    try {
      return new TcpProxy(targetPort);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The loopback port the proxy listens on. */
  public int port() {
    return port;
  }

  /** {@code 127.0.0.1:port} of the proxy. */
  public String address() {
    return "127.0.0.1:" + port;
  }

  /**
   * Holds every chunk of bytes that passes from now on, both ways, for {@code millis} (0: none).
   */
  public void delay(long millis) {
    this.delayMillis = millis;
  }

  /**
   * Holds the first bytes sent to the target on each connection accepted from now on for {@code
   * millis} (0: none): a connection slow to open whose later commands are fast.
   */
  public void holdNewConnections(long millis) {
    this.holdMillis = millis;
  }

  /** How many connections the proxy has passed through to the target. */
  public int accepted() {
    return accepted.get();
  }

  /**
   * Closes every connection and the listening socket: connects are refused until {@link #restore}
   * listens on the same port again.
   */
  public synchronized void refuse() {
    stopListening();
    closeConnections();
  }

  /**
   * Closes every connection, and each new one as soon as it is accepted, until {@link #restore}.
   */
  public synchronized void cut() {
    cut = true;
    closeConnections();
  }

  /** Closes every open connection; new ones are still passed through. */
  public void dropConnections() {
    closeConnections();
  }

  /**
   * Passes connections through again after {@link #cut} or {@link #refuse} (listening on the same
   * port again); nothing to do otherwise.
   */
  public synchronized void restore() {
    cut = false;
    if (!open || !server.isClosed()) {
      return;
    }
    try {
      ServerSocket s = new ServerSocket();
      s.setReuseAddress(true);
      s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 50);
      server = s;
      startAccepting(s);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot listen on " + port + " again", e);
    }
  }

  private void startAccepting(ServerSocket listening) {
    Thread accept = new Thread(() -> accept(listening), "tcp-proxy-accept");
    accept.setDaemon(true);
    acceptor = accept;
    accept.start();
  }

  /**
   * Closes the listening socket and waits for its accepting thread to leave: until it has, the
   * kernel may still complete a connect on the port.
   */
  private void stopListening() {
    closeQuietly(server);
    try {
      acceptor.join(10_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void accept(ServerSocket listening) {
    while (open) {
      Socket client;
      try {
        client = listening.accept();
      } catch (IOException e) {
        return; // refused or closed
      }
      if (cut) {
        closeQuietly(client);
        continue;
      }
      long hold = holdMillis;
      Socket target;
      try {
        target = new Socket(InetAddress.getLoopbackAddress(), targetPort);
        client.setTcpNoDelay(true);
        target.setTcpNoDelay(true);
      } catch (IOException e) {
        // The target is down (restarting): the client sees its connection closed.
        closeQuietly(client);
        continue;
      }
      synchronized (sockets) {
        if (cut || listening.isClosed()) { // cut or refused while this one was connecting
          closeQuietly(client);
          closeQuietly(target);
          continue;
        }
        sockets.add(client);
        sockets.add(target);
      }
      accepted.incrementAndGet();
      pump(client, target, hold);
      pump(target, client, 0);
    }
  }

  /** Copies {@code from} to {@code to}, holding the first chunk {@code firstHoldMillis}. */
  private void pump(Socket from, Socket to, long firstHoldMillis) {
    Thread t =
        new Thread(
            () -> {
              byte[] buf = new byte[16 * 1024];
              try (InputStream in = from.getInputStream();
                  OutputStream out = to.getOutputStream()) {
                long hold = firstHoldMillis;
                int n;
                while ((n = in.read(buf)) >= 0) {
                  long d = Math.max(delayMillis, hold);
                  hold = 0;
                  if (d > 0) {
                    Thread.sleep(d); // the injected latency
                  }
                  out.write(buf, 0, n);
                  out.flush();
                }
              } catch (IOException | InterruptedException e) {
                // connection closed
              } finally {
                closeQuietly(from);
                closeQuietly(to);
              }
            },
            "tcp-proxy-pump");
    t.setDaemon(true);
    t.start();
  }

  private void closeConnections() {
    synchronized (sockets) {
      for (Socket s : sockets) {
        closeQuietly(s);
      }
      sockets.clear();
    }
  }

  private static void closeQuietly(AutoCloseable c) {
    try {
      c.close();
    } catch (Exception e) {
      // closed already
    }
  }

  /** Stops listening and closes every connection. */
  @Override
  public synchronized void close() {
    open = false;
    stopListening();
    closeConnections();
  }
}
