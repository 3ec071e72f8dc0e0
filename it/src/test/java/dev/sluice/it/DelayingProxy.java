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
 * passing it on: a slow store, for fault tests. Close it when done.
 */
final class DelayingProxy implements AutoCloseable {

  private final ServerSocket server;
  private final int targetPort;
  private final List<Socket> sockets = new ArrayList<>();
  private volatile long delayMillis;
  private volatile boolean open = true;

  DelayingProxy(int targetPort, long delayMillis) throws IOException {
    this.targetPort = targetPort;
    this.delayMillis = delayMillis;
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread accept = new Thread(this::accept, "proxy-accept");
    accept.setDaemon(true);
    accept.start();
  }

  int port() {
    return server.getLocalPort();
  }

  void delay(long millis) {
    this.delayMillis = millis;
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
    synchronized (sockets) {
      for (Socket s : sockets) {
        s.close();
      }
    }
  }
}
