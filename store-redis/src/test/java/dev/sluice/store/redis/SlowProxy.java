package dev.sluice.store.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;

/**
 * A TCP proxy on loopback that holds every chunk of bytes, both ways, for a settable delay before
 * passing it on: a Redis that answers slowly, for tests. It can also hold the first bytes of each
 * new connection (a connection slow to open whose later commands are fast) and cut the open
 * connections while still accepting new ones. Close it when done.
 */
final class SlowProxy implements AutoCloseable {

  private final ServerSocket server;
  private final int targetPort;
  private final List<Socket> sockets = new ArrayList<>();
  private volatile long delayMillis;
  private volatile long holdMillis;
  private final java.util.concurrent.atomic.AtomicInteger accepted =
      new java.util.concurrent.atomic.AtomicInteger();
  private volatile boolean open = true;

  SlowProxy(int targetPort) throws IOException {
    this.targetPort = targetPort;
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread accept = new Thread(this::accept, "slow-proxy-accept");
    accept.setDaemon(true);
    accept.start();
  }

  /** {@code 127.0.0.1:port} of the proxy. */
  String address() {
    return "127.0.0.1:" + server.getLocalPort();
  }

  /** Holds every chunk that passes from now on for {@code millis} (0: none). */
  void delay(long millis) {
    this.delayMillis = millis;
  }

  /** Holds the first bytes sent on each connection opened from now on for {@code millis}. */
  void holdNewConnections(long millis) {
    this.holdMillis = millis;
  }

  /** How many connections the proxy has accepted. */
  int accepted() {
    return accepted.get();
  }

  /** Closes every open connection; new ones are still accepted. */
  void cut() throws IOException {
    synchronized (sockets) {
      for (Socket s : sockets) {
        s.close();
      }
      sockets.clear();
    }
  }

  private void accept() {
    while (open) {
      try {
        Socket client = server.accept();
        Socket target = new Socket(InetAddress.getLoopbackAddress(), targetPort);
        client.setTcpNoDelay(true);
        target.setTcpNoDelay(true);
        synchronized (sockets) {
          sockets.add(client);
          sockets.add(target);
        }
        long hold = holdMillis;
        accepted.incrementAndGet();
        pump(client, target, hold);
        pump(target, client, 0);
      } catch (IOException e) {
        return;
      }
    }
  }

  private void pump(Socket from, Socket to, long firstHoldMillis) {
    Thread t =
        new Thread(
            () -> {
              byte[] buf = new byte[16 * 1024];
              try (InputStream in = from.getInputStream();
                  OutputStream out = to.getOutputStream()) {
                int n;
                long hold = firstHoldMillis;
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
              }
            },
            "slow-proxy-pump");
    t.setDaemon(true);
    t.start();
  }

  @Override
  public void close() throws IOException {
    open = false;
    server.close();
    cut();
  }
}
