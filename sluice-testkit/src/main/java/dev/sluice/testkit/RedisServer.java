package dev.sluice.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A real {@code redis-server} (or {@code redis-sentinel}) on a free port of the loopback interface,
 * for tests: started by {@link #start}, stopped by {@link #close}. It can be killed and started
 * again on the same port, and paused ({@code SIGSTOP}) to play a stalled server. No persistence: a
 * restarted server is empty, as a lost one is.
 */
public final class RedisServer implements AutoCloseable {

  static final String BINARY = "/usr/bin/redis-server";
  static final String SENTINEL = "/usr/bin/redis-sentinel";

  private final int port;
  private final List<String> extra;
  private final Path dir;
  private final String binary;

  /** The configuration file a sentinel needs (it rewrites it), else null. */
  private final String config;

  private Process process;

  private RedisServer(int port, List<String> extra) throws IOException {
    this(BINARY, port, extra, null);
  }

  private RedisServer(String binary, int port, List<String> extra, String config)
      throws IOException {
    this.binary = binary;
    this.port = port;
    this.extra = extra;
    this.config = config;
    this.dir = Files.createTempDirectory("sluice-redis-");
  }

  /**
   * A sentinel watching {@code master} under the name {@code name}: it declares the master down
   * after 500 ms without an answer and fails over to a replica (a quorum of one).
   */
  public static RedisServer sentinel(String name, RedisServer master) {
    String conf =
        "sentinel monitor "
            + name
            + " 127.0.0.1 "
            + master.port()
            + " 1\n"
            + "sentinel down-after-milliseconds "
            + name
            + " 500\n"
            + "sentinel failover-timeout "
            + name
            + " 5000\n"
            + "sentinel parallel-syncs "
            + name
            + " 1\n";
    try {
      return onAFreePort(
          port -> {
            RedisServer s = new RedisServer(SENTINEL, port, List.of(), conf);
            s.launch();
            return s;
          });
    } catch (IOException e) {
      throw new IllegalStateException("cannot start redis-sentinel: " + e.getMessage(), e);
    }
  }

  /** A node of a Redis Cluster, not yet joined to one ({@link RedisCluster}). */
  static RedisServer clusterNode() {
    try {
      return onAFreePort(RedisServer::clusterNodeOn);
    } catch (IOException e) {
      throw new IllegalStateException("cannot start redis-server: " + e.getMessage(), e);
    }
  }

  /**
   * A node of a Redis Cluster on {@code port}, not yet joined to one, with {@code args} added (a
   * {@code --cluster-port}, a {@code --cluster-announce-port}): for a cluster a test joins itself.
   * Its node timeout is 1 s.
   */
  public static RedisServer clusterNodeOn(int port, String... args) {
    List<String> all =
        new ArrayList<>(
            List.of(
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                "nodes.conf",
                "--cluster-node-timeout",
                "1000",
                // A replica syncs at once (the default waits 5 s for more replicas to share one
                // transfer), and always stands for election: a replica that never synced cannot
                // replace its master.
                "--repl-diskless-sync-delay",
                "0",
                "--cluster-replica-validity-factor",
                "0"));
    all.addAll(List.of(args));
    return startOn(port, all.toArray(new String[0]));
  }

  /** A standalone server. */
  public static RedisServer start(String... args) {
    try {
      return onAFreePort(
          port -> {
            RedisServer s = new RedisServer(port, List.of(args));
            s.launch();
            return s;
          });
    } catch (IOException e) {
      throw new IllegalStateException("cannot start redis-server: " + e.getMessage(), e);
    }
  }

  /** A standalone server on a given port. */
  public static RedisServer startOn(int port, String... args) {
    try {
      RedisServer s = new RedisServer(port, List.of(args));
      s.launch();
      return s;
    } catch (IOException e) {
      throw new IllegalStateException("cannot start redis-server: " + e.getMessage(), e);
    }
  }

  /** A replica of {@code master}. */
  public static RedisServer replicaOf(RedisServer master) {
    return start("--replicaof", "127.0.0.1", Integer.toString(master.port()));
  }

  public int port() {
    return port;
  }

  /** {@code 127.0.0.1:port}. */
  public String address() {
    return "127.0.0.1:" + port;
  }

  /** {@code redis://127.0.0.1:port}. */
  public String uri() {
    return "redis://" + address();
  }

  private void launch() throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(binary);
    if (config != null) {
      Path file = dir.resolve("sentinel.conf");
      if (!Files.exists(file)) {
        Files.writeString(file, config);
      }
      cmd.add(file.toString());
    }
    cmd.add("--port");
    cmd.add(Integer.toString(port));
    cmd.add("--bind");
    cmd.add("127.0.0.1");
    if (config == null) {
      cmd.add("--save");
      cmd.add("");
      cmd.add("--appendonly");
      cmd.add("no");
    }
    cmd.add("--dir");
    cmd.add(dir.toString());
    cmd.addAll(extra);
    process =
        new ProcessBuilder(cmd)
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("redis.log").toFile())
            .start();
    try {
      awaitReady(Duration.ofSeconds(10));
    } catch (RuntimeException e) {
      kill(); // a server that never answered is not left running
      throw e;
    }
  }

  /** Waits until the server accepts a connection (it may still answer NOAUTH: it is up). */
  private void awaitReady(Duration max) {
    long deadline = System.nanoTime() + max.toNanos();
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IllegalStateException("redis exited: " + log());
      }
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 200);
        s.setSoTimeout(1_000);
        OutputStream out = s.getOutputStream();
        out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
        out.flush();
        InputStream in = s.getInputStream();
        int c = in.read();
        if (c == '+' || c == '-') {
          return;
        }
      } catch (IOException e) {
        // not yet
      }
      Thread.onSpinWait();
      try {
        Thread.sleep(10); // polling a starting process, not waiting for a window
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
    }
    throw new IllegalStateException("redis did not start on " + port + ": " + log());
  }

  /** The server's output so far. */
  public String log() {
    try {
      return Files.readString(dir.resolve("redis.log"));
    } catch (IOException e) {
      return "(no log)";
    }
  }

  /** Kills the server (as a crash would); {@link #restart} brings an empty one back. */
  public void kill() {
    if (process != null) {
      process.destroyForcibly();
      try {
        process.waitFor();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Starts an empty server on the same port. */
  public void restart() {
    kill();
    try {
      launch();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Stops the server answering (SIGSTOP) without closing its connections. */
  public void pause() {
    signal("STOP");
  }

  /** Lets a paused server answer again (SIGCONT). */
  public void resume() {
    signal("CONT");
  }

  private void signal(String name) {
    try {
      Process p = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).start();
      p.waitFor();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Sends one command through redis-cli and returns its answer. */
  public String cli(String... args) {
    List<String> cmd = new ArrayList<>(List.of("/usr/bin/redis-cli", "-p", Integer.toString(port)));
    cmd.addAll(List.of(args));
    try {
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
      p.waitFor();
      return out;
    } catch (IOException e) {
      throw new IllegalStateException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /**
   * A number from {@code INFO replication}, such as {@code master_repl_offset} or {@code
   * slave_repl_offset}; -1 when it is not there.
   */
  public long replicationInfo(String field) {
    for (String line : cli("INFO", "replication").lines().toList()) {
      if (line.startsWith(field + ":")) {
        return Long.parseLong(line.substring(field.length() + 1).trim());
      }
    }
    return -1;
  }

  /**
   * Waits until this replica has applied everything {@code master} has written so far (its
   * replication offset reached the master's); an {@link AssertionError} after 10 s. {@code WAIT}
   * cannot tell: it waits only for the writes of its own connection, and redis-cli's has made none.
   */
  public void awaitReplicated(RedisServer master) throws InterruptedException {
    long written = master.replicationInfo("master_repl_offset");
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (replicationInfo("slave_repl_offset") < written) {
      if (System.nanoTime() >= deadline) {
        throw new AssertionError("the replica did not catch up with its master");
      }
      Thread.sleep(10); // a condition wait with a deadline
    }
  }

  /**
   * Milliseconds until this replica says it is a master (the failover is done), asking every 10 ms;
   * an {@link AssertionError} after {@code max}.
   */
  public long millisUntilMaster(Duration max) throws InterruptedException {
    long t0 = System.nanoTime();
    while (!cli("ROLE").startsWith("master")) {
      if (System.nanoTime() - t0 >= max.toNanos()) {
        throw new AssertionError("no failover within " + max);
      }
      Thread.sleep(10); // a condition wait with a deadline
    }
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
  }

  /**
   * Waits until this sentinel knows {@code replica} of the master it watches as {@code name} (it
   * fails over to no one before); an {@link AssertionError} after 20 s.
   */
  public void awaitSeesReplica(String name, RedisServer replica) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!cli("SENTINEL", "REPLICAS", name).contains(replica.port() + "")) {
      if (System.nanoTime() >= deadline) {
        throw new AssertionError("the sentinel never saw the replica");
      }
      Thread.sleep(50); // a condition wait with a deadline
    }
  }

  @Override
  public void close() {
    if (process != null && process.isAlive()) {
      resume();
    }
    kill();
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
    } catch (IOException e) {
      // a temporary directory left behind costs nothing the test needs
    }
  }

  /** A loopback port nothing listens on now, for a server a test starts itself. */
  public static int freePort() {
    return Servers.freePort();
  }

  private interface Launch {
    RedisServer at(int port) throws IOException;
  }

  /**
   * Launches on a free port, and again on another when the port was taken between its choice and
   * the server's bind (another process, or a connection's ephemeral port), up to five times.
   */
  private static RedisServer onAFreePort(Launch launch) throws IOException {
    for (int attempt = 1; ; attempt++) {
      try {
        return launch.at(freePort());
      } catch (IllegalStateException e) {
        if (attempt == 5 || !String.valueOf(e.getMessage()).contains("Address already in use")) {
          throw e;
        }
      }
    }
  }
}
