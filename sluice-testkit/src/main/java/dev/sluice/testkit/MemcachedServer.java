package dev.sluice.testkit;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * A real memcached for tests, on a free loopback port: the local {@code memcached} binary when it
 * is on the PATH, else Testcontainers' memcached image when a Docker engine is reachable. It can be
 * killed, stalled (SIGSTOP), resumed (SIGCONT) and restarted, and reads the server's own {@code
 * stats}. Close it when done, or let {@link Memcached @Memcached} start one per test class.
 */
public final class MemcachedServer implements AutoCloseable {

  private static final Duration START_TIMEOUT = Duration.ofSeconds(10);

  private MemcachedBackend backend;

  private MemcachedServer() {}

  /** Starts a server with 64 MB of memory. */
  public static MemcachedServer start() {
    return start(64);
  }

  /** Starts a server with {@code megabytes} of item memory. */
  public static MemcachedServer start(int megabytes) {
    return start(megabytes, List.of());
  }

  /**
   * Starts a server with {@code megabytes} of item memory and {@code extraArgs} after the usual
   * ones (e.g. {@code -M} to refuse writes rather than evict, or {@code -o slab_reassign}).
   */
  public static MemcachedServer start(int megabytes, List<String> extraArgs) {
    String binary = findBinary();
    MemcachedServer server = new MemcachedServer();
    if (binary != null) {
      server.backend = new LocalProcess(binary, Servers.freePort(), megabytes, extraArgs);
      return server;
    }
    if (DOCKER.get()) {
      server.backend = new MemcachedContainer(megabytes, extraArgs);
      return server;
    }
    if (MISSING_REPORTED.compareAndSet(false, true)) {
      throw new Missing();
    }
    throw Servers.skipped("memcached is not installed (see the first failure)", Missing::new);
  }

  /** Set to a path to use that binary, or to {@code none} to act as if none were installed. */
  static final String BINARY_PROPERTY = "sluice.memcached.binary";

  private static final java.util.concurrent.atomic.AtomicBoolean MISSING_REPORTED =
      new java.util.concurrent.atomic.AtomicBoolean();
  private static final java.util.function.Supplier<Boolean> DOCKER =
      new java.util.function.Supplier<>() {
        private volatile Boolean answer;

        @Override
        public Boolean get() {
          if (answer == null) {
            answer =
                !"none".equals(System.getProperty(BINARY_PROPERTY)) && Servers.dockerAvailable();
          }
          return answer;
        }
      };

  /** One line, no stack trace: the first test that needs memcached says how to get it. */
  static final class Missing extends IllegalStateException {
    Missing() {
      super(
          "memcached is not installed: run 'apt-get install -y memcached' (Debian/Ubuntu) or put a memcached "
              + "binary on the PATH; with a Docker engine, Testcontainers starts one instead. Later tests that need it are skipped.");
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
      return this;
    }
  }

  public String host() {
    return "127.0.0.1";
  }

  public int port() {
    return backend.port();
  }

  /** {@code host:port}. */
  public String address() {
    return host() + ":" + port();
  }

  public InetSocketAddress socketAddress() {
    return new InetSocketAddress(host(), port());
  }

  /** Kills the server at once (SIGKILL): its items are lost. */
  public void kill() {
    backend.kill();
  }

  /** Freezes the server (SIGSTOP): connections stay open, nothing answers. */
  public void stall() {
    backend.signal("STOP");
  }

  /** Thaws a stalled server (SIGCONT). */
  public void resume() {
    backend.signal("CONT");
  }

  /** Starts the server again, empty, on the same port. */
  public void restart() {
    backend.kill();
    backend.start();
    awaitReady();
  }

  /** The server's {@code stats}, as name → value. */
  public Map<String, String> stats() {
    Map<String, String> stats = new HashMap<>();
    for (String line : command("stats", "END")) {
      String[] parts = line.split(" ", 3);
      if (parts.length == 3 && parts[0].equals("STAT")) {
        stats.put(parts[1], parts[2]);
      }
    }
    return stats;
  }

  /**
   * The reads and writes the server has answered so far: keys read by {@code get}, {@code incr}s,
   * {@code decr}s and {@code set}s, from its {@code stats}.
   */
  public long operations() {
    Map<String, String> st = stats();
    long n = 0;
    for (String k :
        List.of(
            "get_hits",
            "get_misses",
            "incr_hits",
            "incr_misses",
            "decr_hits",
            "decr_misses",
            "cmd_set")) {
      n += Long.parseLong(st.getOrDefault(k, "0"));
    }
    return n;
  }

  /** One statistic as a number. */
  public long stat(String name) {
    return Long.parseLong(stats().get(name));
  }

  /**
   * Sends one text-protocol command and returns the lines of the answer up to and including the
   * first line that starts with {@code last} (or the first line when {@code last} is null).
   */
  public List<String> command(String command, String last) {
    return command(port(), command, last);
  }

  private static List<String> command(int port, String command, String last) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), port), 2_000);
      s.setSoTimeout(5_000);
      OutputStream out = s.getOutputStream();
      out.write((command + "\r\n").getBytes(StandardCharsets.US_ASCII));
      out.flush();
      BufferedReader in =
          new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII));
      List<String> lines = new ArrayList<>();
      String line;
      while ((line = in.readLine()) != null) {
        lines.add(line);
        if (last == null
            || line.startsWith(last)
            || line.startsWith("ERROR")
            || line.startsWith("CLIENT_ERROR")) {
          break;
        }
      }
      return lines;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Whether the server accepts a connection and answers {@code version}. */
  public boolean answers() {
    return answers(port());
  }

  private static boolean answers(int port) {
    try {
      return command(port, "version", null).get(0).startsWith("VERSION");
    } catch (RuntimeException e) {
      return false;
    }
  }

  @Override
  public void close() {
    backend.kill();
  }

  private void awaitReady() {
    if (!await(START_TIMEOUT, this::answers)) {
      throw new IllegalStateException(
          "memcached did not answer on " + address() + " within " + START_TIMEOUT);
    }
  }

  /**
   * Polls {@code condition} until it holds or {@code timeout} passes; for end-to-end fault tests,
   * which wait on real processes (unit tests inject time instead).
   */
  public static boolean await(Duration timeout, BooleanSupplier condition) {
    return Servers.await(timeout, condition);
  }

  private static String findBinary() {
    return Servers.findBinary(BINARY_PROPERTY, "memcached");
  }

  private static final class LocalProcess implements MemcachedBackend {
    private final String binary;
    private final int port;
    private final int megabytes;
    private final List<String> extraArgs;
    private Process process;

    LocalProcess(String binary, int port, int megabytes, List<String> extraArgs) {
      this.binary = binary;
      this.port = port;
      this.megabytes = megabytes;
      this.extraArgs = List.copyOf(extraArgs);
      start();
      awaitStarted();
    }

    private void awaitStarted() {
      // memcached refuses to start if another process took the port in the meantime.
      if (!await(START_TIMEOUT, () -> !process.isAlive() || answers(port)) || !process.isAlive()) {
        throw new IllegalStateException("memcached did not start on port " + port);
      }
    }

    @Override
    public int port() {
      return port;
    }

    @Override
    public void start() {
      List<String> cmd =
          new ArrayList<>(
              List.of(
                  binary,
                  "-l",
                  "127.0.0.1",
                  "-p",
                  String.valueOf(port),
                  "-U",
                  "0",
                  "-m",
                  String.valueOf(megabytes),
                  "-c",
                  "4096",
                  "-t",
                  "2"));
      cmd.addAll(extraArgs);
      if ("root".equals(System.getProperty("user.name"))) {
        cmd.addAll(List.of("-u", "root"));
      }
      try {
        process =
            new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    @Override
    public void kill() {
      if (process != null && process.isAlive()) {
        process.destroyForcibly();
        try {
          process.waitFor();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }

    @Override
    public void signal(String signal) {
      try {
        new ProcessBuilder("kill", "-" + signal, String.valueOf(process.pid()))
            .inheritIO()
            .start()
            .waitFor();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      // kill returns once the signal is sent; the process is stopped once all its threads are.
      boolean stop = signal.equals("STOP");
      if (!await(
          Duration.ofSeconds(5),
          () -> {
            Boolean stopped = stopped();
            return stopped == null || stopped == stop;
          })) {
        throw new IllegalStateException(
            "memcached did not " + (stop ? "stop" : "continue") + " on SIG" + signal);
      }
    }

    /** Whether /proc says the process is stopped (state T); null where there is no /proc to ask. */
    private Boolean stopped() {
      try {
        String stat =
            java.nio.file.Files.readString(
                java.nio.file.Path.of("/proc", String.valueOf(process.pid()), "stat"));
        String rest = stat.substring(stat.lastIndexOf(')') + 1).trim();
        return rest.charAt(0) == 'T';
      } catch (IOException | RuntimeException e) {
        return null;
      }
    }
  }
}
