package dev.sluice.testkit;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * One HTTP/1.1 connection to a server on this host, written and read by hand, for what an HTTP
 * client library will not send: requests go out as given, several in one write (pipelined), and
 * responses come back one at a time, each read to the end of its body ({@code Content-Length} or
 * chunked; not a body that ends with the connection, nor a 1xx or a response to {@code HEAD}). A
 * read that waits longer than the timeout fails with {@link java.net.SocketTimeoutException}.
 */
public final class HttpConnection implements AutoCloseable {

  private final Socket socket;
  private final OutputStream out;
  private final DataInputStream in;

  /** Connects to {@code port} on the loopback address; each read waits at most {@code timeout}. */
  public HttpConnection(int port, Duration timeout) throws IOException {
    socket = new Socket(InetAddress.getLoopbackAddress(), port);
    socket.setSoTimeout(Math.toIntExact(timeout.toMillis()));
    out = socket.getOutputStream();
    in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
  }

  /**
   * A {@code GET} of {@code path} with a {@code Host} header and {@code headers} ("Name: value").
   */
  public static String get(String path, String... headers) {
    StringBuilder r = new StringBuilder("GET ").append(path).append(" HTTP/1.1\r\n");
    r.append("Host: localhost\r\n");
    for (String h : headers) {
      r.append(h).append("\r\n");
    }
    return r.append("\r\n").toString();
  }

  /** Writes {@code requests} one after another in a single write. */
  public void send(String... requests) throws IOException {
    out.write(String.join("", requests).getBytes(StandardCharsets.ISO_8859_1));
    out.flush();
  }

  /** The next response, whole: status line, headers and body. */
  public String next() throws IOException {
    StringBuilder head = new StringBuilder();
    boolean chunked = false;
    int length = 0;
    for (String line = line(); !line.isEmpty(); line = line()) {
      head.append(line).append("\r\n");
      int colon = line.indexOf(':');
      String name = colon < 0 ? "" : line.substring(0, colon).trim();
      String value = colon < 0 ? "" : line.substring(colon + 1).trim();
      if (name.equalsIgnoreCase("Transfer-Encoding")) {
        String[] codings = value.split(",", -1);
        chunked = codings[codings.length - 1].trim().equalsIgnoreCase("chunked");
      } else if (name.equalsIgnoreCase("Content-Length")) {
        length = Integer.parseInt(value);
      }
    }
    head.append("\r\n");
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    if (chunked) {
      for (int size = chunkSize(); size > 0; size = chunkSize()) {
        body.write(bytes(size));
        line(); // the chunk's CRLF
      }
      while (!line().isEmpty()) {
        // trailers
      }
    } else {
      body.write(bytes(length));
    }
    return head + body.toString(StandardCharsets.UTF_8);
  }

  private int chunkSize() throws IOException {
    String line = line();
    int extension = line.indexOf(';');
    return Integer.parseInt((extension < 0 ? line : line.substring(0, extension)).trim(), 16);
  }

  private byte[] bytes(int n) throws IOException {
    byte[] b = new byte[n];
    in.readFully(b);
    return b;
  }

  /** A line without its CRLF. */
  private String line() throws IOException {
    StringBuilder line = new StringBuilder();
    for (int c = in.readUnsignedByte(); c != '\n'; c = in.readUnsignedByte()) {
      if (c != '\r') {
        line.append((char) c);
      }
    }
    return line.toString();
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
