package dev.sluice.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The demo as its own process ({@code example/target/sluice-example.jar}) on a free loopback port,
 * for tests that kill it or load it as a user would; started healthy, its output in {@code log}.
 */
final class DemoProcess implements AutoCloseable {

  private static final HttpClient HTTP =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  /**
   * libfaketime ({@code apt-get install faketime} on Debian), for this JVM's architecture, or as
   * {@code -Dsluice.libfaketime} names it; null when it is not installed.
   */
  static final Path LIBFAKETIME = findLibfaketime();

  final Process process;
  final int port;

  private final Path log;

  private DemoProcess(Process process, int port, Path log) {
    this.process = process;
    this.port = port;
    this.log = log;
  }

  /** Starts the demo with {@code args} (after {@code --host} and {@code --port}) and waits. */
  static DemoProcess start(Path log, String... args) throws IOException, InterruptedException {
    return startAt(log, null, args);
  }

  /**
   * Starts the demo with its wall clock moved by {@code offset} (libfaketime's spelling, e.g.
   * {@code +30s} or {@code -60s}; null for none) with {@code args}, and waits.
   *
   * <p>The JVM is started with libfaketime preloaded, not under Debian's {@code faketime} command:
   * the library and the command each keep a semaphore and a shared-memory segment named after their
   * process id and remove them only at a normal exit, and a killed command's are left in {@code
   * /dev/shm} until a later command with the same process id fails on them ("sem_open: File
   * exists"). The library passes over a stale semaphore, and {@link #close} removes the JVM's.
   */
  static DemoProcess startAt(Path log, String offset, String... args)
      throws IOException, InterruptedException {
    // A free port may be taken by another socket before the demo binds it: then it exits at once,
    // and it is started again on another port.
    for (int attempt = 1; ; attempt++) {
      DemoProcess demo = launch(log, offset, args);
      try {
        demo.waitForHealth();
        return demo;
      } catch (AssertionError | InterruptedException e) {
        demo.close();
        if (attempt == 3 || !(e instanceof AssertionError) || !demo.lostItsPort()) {
          throw e;
        }
      }
    }
  }

  private static DemoProcess launch(Path log, String offset, String... args) throws IOException {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    Path jar =
        Path.of("..", "example", "target", "sluice-example.jar").toAbsolutePath().normalize();
    assertTrue(Files.exists(jar), "build the example module first: " + jar);
    List<String> cmd =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                // Times in the log, to line an instance's store losses up with a run's faults.
                "-Dorg.slf4j.simpleLogger.showDateTime=true",
                "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
                "-jar",
                jar.toString(),
                "--host",
                "127.0.0.1",
                "--port",
                Integer.toString(port)));
    cmd.addAll(List.of(args));
    ProcessBuilder pb =
        new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
    if (offset != null) {
      Map<String, String> env = pb.environment();
      env.merge("LD_PRELOAD", LIBFAKETIME.toString(), (inherited, lib) -> lib + ":" + inherited);
      env.put("FAKETIME", offset);
      // Only the wall clock is moved: the JVM's timers keep their monotonic time (without the
      // second setting, an idle JVM spins on a core).
      env.put("FAKETIME_DONT_FAKE_MONOTONIC", "1");
      env.put("FAKETIME_FORCE_MONOTONIC_FIX", "0");
    }
    return new DemoProcess(pb.start(), port, log);
  }

  private boolean lostItsPort() throws IOException {
    return !process.isAlive() && Files.readString(log).contains("Address already in use");
  }

  private void waitForHealth() throws InterruptedException, IOException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (System.nanoTime() < deadline && process.isAlive()) {
      try {
        HttpResponse<String> r =
            HTTP.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health"))
                    .timeout(Duration.ofSeconds(5))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() == 200) {
          return;
        }
      } catch (IOException e) {
        // not up yet
      }
      Thread.sleep(100);
    }
    String output = Files.readString(log);
    throw new AssertionError(
        "the demo on port "
            + port
            + (process.isAlive()
                ? " never answered /health"
                : " exited with " + process.exitValue())
            + "; its output ("
            + log
            + "):\n"
            + output.substring(Math.max(0, output.length() - 4000))
            + (process.isAlive() ? "\nits threads:\n" + threadDump() : ""));
  }

  /** The demo JVM's threads ({@code jcmd Thread.print}), for a demo that is up but silent. */
  String threadDump() throws InterruptedException, IOException {
    Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
    Process p =
        new ProcessBuilder(jcmd.toString(), Long.toString(process.pid()), "Thread.print")
            .redirectErrorStream(true)
            .start();
    if (!p.waitFor(20, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      return "(jcmd did not answer in 20 s)";
    }
    return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
  }

  /**
   * Kills it (SIGKILL), waits for it to go, and removes what libfaketime kept for it: the library
   * makes a semaphore and a shared-memory segment per process and removes them only at a normal
   * exit.
   */
  @Override
  public void close() throws InterruptedException {
    process.destroyForcibly();
    if (process.waitFor(20, TimeUnit.SECONDS)) {
      for (String name : List.of("sem.faketime_sem_", "faketime_shm_")) {
        try {
          Files.deleteIfExists(Path.of("/dev/shm", name + process.pid()));
        } catch (IOException e) {
          // not ours, or gone: nothing to clean
        }
      }
    }
  }

  private static Path findLibfaketime() {
    String given = System.getProperty("sluice.libfaketime");
    if (given != null) {
      return Path.of(given);
    }
    // This JVM's architecture first (Debian's multiarch directory), then the other layouts.
    String arch = System.getProperty("os.arch");
    String multiarch = (arch.equals("amd64") ? "x86_64" : arch) + "-linux-gnu";
    return Stream.of("/usr/lib/" + multiarch, "/usr/lib", "/usr/lib64", "/usr/local/lib")
        .map(d -> Path.of(d, "faketime", "libfaketime.so.1"))
        .filter(Files::isReadable)
        .findFirst()
        .orElse(null);
  }
}
