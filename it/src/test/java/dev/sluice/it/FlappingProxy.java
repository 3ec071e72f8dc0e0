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
 * A TCP proxy on loopback that can cut its store off and restore it: {@link #cut()} closes every
 * connection and closes each new one at once (the store is unreachable, as when a network flaps),
 * {@link #restore()} passes connections through again. Close it when done.
 */
final class FlappingProxy implements AutoCloseable {

  private final ServerSocket server;
  private final int targetPort;
  private final List<Socket> sockets = new ArrayList<>();
  private volatile boolean cut;
  private volatile boolean open = true;

  FlappingProxy(int targetPort) throws IOException {
    this.targetPort = targetPort;
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread accept = new Thread(this::accept, "flapping-proxy-accept");
    accept.setDaemon(true);
    accept.start();
  }

  int port() {
    return server.getLocalPort();
  }

  /** Closes every connection, and each new one as it comes, until {@link #restore()}. */
  void cut() {
    cut = true;
    closeAll();
  }

  void restore() {
    cut = false;
  }

  private void accept() {
    while (open) {
      Socket client;
      try {
        client = server.accept();
      } catch (IOException e) {
        return;
      }
      try {
        if (cut) {
          client.close();
          continue;
        }
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
        // the store is down (restarting): this client sees its connection closed
        try {
          client.close();
        } catch (IOException ignored) {
          // closed already
        }
      }
    }
  }

  private static void pump(Socket from, Socket to) {
    Thread t =
        new Thread(
            () -> {
              byte[] buf = new byte[16 * 1024];
              try (InputStream in = from.getInputStream();
                  OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buf)) >= 0) {
                  out.write(buf, 0, n);
                  out.flush();
                }
              } catch (IOException e) {
                // connection closed
              } finally {
                try {
                  from.close();
                  to.close();
                } catch (IOException ignored) {
                  // closed already
                }
              }
            },
            "flapping-proxy-pump");
    t.setDaemon(true);
    t.start();
  }

  private void closeAll() {
    synchronized (sockets) {
      for (Socket s : sockets) {
        try {
          s.close();
        } catch (IOException ignored) {
          // closed already
        }
      }
      sockets.clear();
    }
  }

  @Override
  public void close() throws IOException {
    open = false;
    server.close();
    closeAll();
  }
}
