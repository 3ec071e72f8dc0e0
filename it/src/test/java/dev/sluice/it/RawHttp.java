package dev.sluice.it;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;

/** HTTP/1.1 over a plain socket, sent exactly as written: no client tidies a path or a header. */
final class RawHttp {

  private RawHttp() {}

  /**
   * The status of {@code request} (the whole request text), or -1 when the server closed the
   * connection.
   */
  static int status(int port, String request) throws IOException {
    try (Socket s = new Socket(java.net.InetAddress.getLoopbackAddress(), port)) {
      s.setSoTimeout(10_000);
      OutputStream out = s.getOutputStream();
      out.write(request.getBytes(StandardCharsets.UTF_8));
      out.flush();
      String status =
          new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.ISO_8859_1))
              .readLine();
      return status == null ? -1 : Integer.parseInt(status.split(" ", -1)[1]);
    } catch (java.net.SocketException e) {
      return -1;
    }
  }

  /**
   * The status of a request whose request line and headers are {@code head}; Host and Connection
   * are added.
   */
  static int status(int port, List<String> head) throws IOException {
    StringBuilder req = new StringBuilder(head.get(0)).append("\r\nHost: localhost\r\n");
    for (String h : head.subList(1, head.size())) {
      req.append(h).append("\r\n");
    }
    return status(port, req.append("Connection: close\r\n\r\n").toString());
  }

  /** The whole response to a request line, sent with Host, an empty body and Connection: close. */
  static String response(int port, String requestLine) throws IOException {
    try (Socket s = new Socket(java.net.InetAddress.getLoopbackAddress(), port)) {
      s.setSoTimeout(10_000);
      OutputStream out = s.getOutputStream();
      out.write(
          (requestLine + "\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
              .getBytes(StandardCharsets.ISO_8859_1));
      out.flush();
      return new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    }
  }
}
