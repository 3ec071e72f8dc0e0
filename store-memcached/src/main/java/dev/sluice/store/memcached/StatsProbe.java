package dev.sluice.store.memcached;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.InstantSource;
import java.util.concurrent.locks.LockSupport;

/**
 * One connection of its own to a memcached server, asked for {@code stats}: the server's time in
 * whole seconds, and which process answered. Not thread-safe: one {@link MemcachedClock} step uses
 * it at a time.
 */
final class StatsProbe {
  private static final byte[] STATS = "stats\r\n".getBytes(StandardCharsets.US_ASCII);

  private final Socket socket;
  private final OutputStream out;
  private final BufferedReader in;
  private String process;

  private StatsProbe(Socket socket) throws IOException {
    this.socket = socket;
    this.out = socket.getOutputStream();
    this.in =
        new BufferedReader(
            new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII));
  }

  static StatsProbe open(InetSocketAddress server, int timeoutMillis) throws IOException {
    Socket s = new Socket();
    try {
      s.setTcpNoDelay(true);
      s.setSoTimeout(timeoutMillis);
      s.connect(server, timeoutMillis);
      return new StatsProbe(s);
    } catch (IOException | RuntimeException e) {
      s.close();
      throw e;
    }
  }

  long time() throws IOException {
    out.write(STATS);
    out.flush();
    long time = -1;
    long uptime = -1;
    String pid = "";
    for (String line = in.readLine(); line != null; line = in.readLine()) {
      if (line.startsWith("STAT time ")) {
        time = Long.parseLong(line.substring(10).trim());
      } else if (line.startsWith("STAT uptime ")) {
        uptime = Long.parseLong(line.substring(12).trim());
      } else if (line.startsWith("STAT pid ")) {
        pid = line.substring(9).trim();
      } else if (line.equals("END")) {
        if (time < 0) {
          throw new IOException("memcached's stats have no time");
        }
        // time − uptime is the process's start, fixed for its life: with the pid, which process.
        process = pid + ":" + (uptime < 0 ? "?" : Long.toString(time - uptime));
        return time;
      } else if (line.startsWith("ERROR") || line.startsWith("SERVER_ERROR")) {
        throw new IOException("memcached answered stats with " + line);
      }
    }
    throw new IOException("memcached closed the connection");
  }

  /** A tick of memcached's clock: second {@code second} began at host time {@code localMillis}. */
  record Tick(long second, long localMillis, long errorMillis) {}

  /**
   * Reads back to back, {@code pauseNanos} apart, until memcached's second after {@code second}
   * begins, and places that tick between the last two reads.
   *
   * @param local the host's clock
   * @param end the host time by which the tick must have come
   * @param last the host time of the read before this call, which found {@code second}
   * @throws IOException when the tick does not come by {@code end}, or the second jumps by more
   *     than one
   */
  Tick nextTick(InstantSource local, long second, long end, long pauseNanos, long last)
      throws IOException {
    long before = last;
    while (true) {
      long b = local.millis();
      long now = time();
      long a = local.millis();
      if (now != second) {
        if (now != second + 1) {
          throw new IOException("memcached's second ticked unevenly: " + second + ", " + now);
        }
        return new Tick(now, (before + a) / 2, (a - before + 1) / 2 + 1);
      }
      if (a > end) {
        throw new IOException("memcached's second did not tick over when expected");
      }
      before = b;
      LockSupport.parkNanos(pauseNanos);
    }
  }

  /** The process that answered the last {@link #time}: its pid and start time. */
  String process() {
    return process;
  }

  void close() {
    try {
      socket.close();
    } catch (IOException e) {
      // closing anyway
    }
  }
}
