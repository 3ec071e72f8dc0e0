package dev.sluice.cli;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import javax.net.ssl.SSLSocketFactory;

/**
 * One keep-alive HTTP/1.1 connection for the load generator: it writes a GET and reads the status,
 * the headers and the body (by Content-Length or chunked), then keeps the socket for the next
 * request. Blocking and single-threaded; far cheaper per request than {@code java.net.http}, so the
 * loader does not take the CPU the server under test needs.
 */
final class Http1Connection implements AutoCloseable {

  private final URI url;
  private final byte[] head;
  private final int timeoutMillis;
  private Socket socket;
  private InputStream in;
  private OutputStream out;
  private final byte[] line = new byte[8192];

  /**
   * @param headers the request's header lines, each ending in CRLF, after Host
   */
  Http1Connection(URI url, String headers, int timeoutMillis) {
    this.url = url;
    this.timeoutMillis = timeoutMillis;
    String path = url.getRawPath() == null || url.getRawPath().isEmpty() ? "/" : url.getRawPath();
    if (url.getRawQuery() != null) {
      path += "?" + url.getRawQuery();
    }
    this.head =
        ("GET " + path + " HTTP/1.1\r\nHost: " + hostHeader(url) + "\r\n" + headers)
            .getBytes(StandardCharsets.ISO_8859_1);
  }

  private static String hostHeader(URI url) {
    return url.getPort() < 0 ? url.getHost() : url.getHost() + ":" + url.getPort();
  }

  /**
   * Whether the last response carried a rate-limit header ({@code RateLimit}, {@code
   * RateLimit-Policy} or an {@code X-RateLimit-} one): a limiter decided it.
   */
  private boolean limited;

  /** {@return whether the last response carried a rate-limit header} */
  boolean limited() {
    return limited;
  }

  /** Sends a GET with {@code extra} header lines (CRLF-terminated) and returns the status. */
  int get(String extra) throws IOException {
    if (socket == null) {
      open();
    }
    try {
      out.write(head);
      out.write(extra.getBytes(StandardCharsets.ISO_8859_1));
      out.write('\r');
      out.write('\n');
      out.flush();
      return read();
    } catch (IOException e) {
      close();
      throw e;
    }
  }

  private void open() throws IOException {
    boolean tls = "https".equals(url.getScheme());
    int port = url.getPort() >= 0 ? url.getPort() : tls ? 443 : 80;
    Socket s = tls ? SSLSocketFactory.getDefault().createSocket() : new Socket();
    s.setTcpNoDelay(true);
    s.setSoTimeout(timeoutMillis);
    s.connect(new InetSocketAddress(url.getHost(), port), timeoutMillis);
    socket = s;
    in = new BufferedInputStream(s.getInputStream(), 16_384);
    out = new java.io.BufferedOutputStream(s.getOutputStream(), 4_096);
  }

  private int read() throws IOException {
    int n = readLine();
    // "HTTP/1.1 200 OK"
    if (n < 12 || line[8] != ' ') {
      throw new IOException("not an HTTP response: " + text(n));
    }
    int status = (line[9] - '0') * 100 + (line[10] - '0') * 10 + (line[11] - '0');
    long length = -1;
    boolean chunked = false;
    boolean close = false;
    limited = false;
    while ((n = readLine()) > 0) {
      String h = text(n);
      int colon = h.indexOf(':');
      if (colon < 0) {
        continue;
      }
      String name = h.substring(0, colon).trim();
      String value = h.substring(colon + 1).trim();
      if (isRateLimitHeader(name)) {
        limited = true;
      } else if (name.equalsIgnoreCase("Content-Length")) {
        length = Long.parseLong(value);
      } else if (name.equalsIgnoreCase("Transfer-Encoding")) {
        chunked = value.toLowerCase(java.util.Locale.ROOT).contains("chunked");
      } else if (name.equalsIgnoreCase("Connection")) {
        close = value.equalsIgnoreCase("close");
      }
    }
    if (chunked) {
      while (true) {
        int m = readLine();
        String size = text(m);
        int semi = size.indexOf(';');
        long chunk = Long.parseLong((semi < 0 ? size : size.substring(0, semi)).trim(), 16);
        if (chunk == 0) {
          while (readLine() > 0) {
            // trailers
          }
          break;
        }
        skip(chunk);
        readLine();
      }
    } else if (length > 0) {
      skip(length);
    } else if (length < 0 && status >= 200 && status != 204 && status != 304) {
      close = true; // a body up to the end of the connection: read it, then reconnect
      while (in.read(line) >= 0) {
        // drain
      }
    }
    if (close) {
      close();
    }
    return status;
  }

  /** {@code RateLimit}, {@code RateLimit-Policy} or {@code X-RateLimit-*}, in any case. */
  static boolean isRateLimitHeader(String name) {
    return name.equalsIgnoreCase("RateLimit")
        || name.equalsIgnoreCase("RateLimit-Policy")
        || name.regionMatches(true, 0, "X-RateLimit-", 0, 12);
  }

  private void skip(long n) throws IOException {
    while (n > 0) {
      long s = in.skip(n);
      if (s <= 0) {
        if (in.read() < 0) {
          throw new IOException("connection closed in the body");
        }
        s = 1;
      }
      n -= s;
    }
  }

  /** Reads a line without its CRLF into {@link #line}; returns its length. */
  private int readLine() throws IOException {
    int n = 0;
    while (true) {
      int c = in.read();
      if (c < 0) {
        throw new IOException("connection closed");
      }
      if (c == '\n') {
        return n > 0 && line[n - 1] == '\r' ? n - 1 : n;
      }
      if (n == line.length) {
        throw new IOException("header line over " + line.length + " bytes");
      }
      line[n++] = (byte) c;
    }
  }

  private String text(int n) {
    return new String(line, 0, n, StandardCharsets.ISO_8859_1);
  }

  @Override
  public void close() {
    if (socket != null) {
      try {
        socket.close();
      } catch (IOException ignored) {
        // closing
      }
      socket = null;
    }
  }
}
