package dev.sluice.it;

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
 * passing it on: a slow store, for fault tests. It can also cut every connection and refuse new
 * ones ({@link #cut}) until {@link #restore}d on the same port: a partition from a store that keeps
 * running. Close it when done.
 */
final class DelayingProxy implements AutoCloseable {

  private volatile ServerSocket server;
  private final int port;
  private final int targetPort;
  private final List<Socket> sockets = new ArrayList<>();
  private volatile long delayMillis;
  private volatile boolean open = true;

  DelayingProxy(int targetPort, long delayMillis) throws IOException {
    this.targetPort = targetPort;
    this.delayMillis = delayMillis;
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    this.port = server.getLocalPort();
    startAccepting();
  }

  private void startAccepting() {
    Thread accept = new Thread(this::accept, "proxy-accept");
    accept.setDaemon(true);
    accept.start();
  }

  int port() {
    return port;
  }

  /** Closes every connection and the listening socket: connects are refused until restored. */
  synchronized void cut() throws IOException {
    server.close();
    closeSockets();
  }

  /** Listens on the same port again after a {@link #cut}; nothing to do if not cut. */
  synchronized void restore() throws IOException {
    if (!server.isClosed()) {
      return;
    }
    ServerSocket s = new ServerSocket();
    s.setReuseAddress(true);
    s.bind(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), port), 50);
    server = s;
    startAccepting();
  }

  private void closeSockets() throws IOException {
    synchronized (sockets) {
      for (Socket s : sockets) {
        s.close();
      }
      sockets.clear();
    }
  }

  void delay(long millis) {
    this.delayMillis = millis;
  }

  private void accept() {
    ServerSocket listening = server;
    while (open) {
      try {
        Socket client = listening.accept();
        Socket target = new Socket(InetAddress.getLoopbackAddress(), targetPort);
        client.setTcpNoDelay(true);
        target.setTcpNoDelay(true);
        synchronized (sockets) {
          sockets.add(client);
          sockets.add(target);
        }
        pump(client, target);
        pump(target, client);
      } catch (IOException e) {
        return;
      }
    }
  }

  private void pump(Socket from, Socket to) {
    Thread t =
        new Thread(
            () -> {
              byte[] buf = new byte[16 * 1024];
              try (InputStream in = from.getInputStream();
                  OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buf)) >= 0) {
                  long d = delayMillis;
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
            "proxy-pump");
    t.setDaemon(true);
    t.start();
  }

  @Override
  public void close() throws IOException {
    open = false;
    server.close();
    closeSockets();
  }
}
