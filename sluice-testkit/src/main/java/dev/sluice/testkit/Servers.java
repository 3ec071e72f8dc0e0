package dev.sluice.testkit;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.testcontainers.DockerClientFactory;

/** What every server fixture needs: a free port, a binary, a wait with a deadline, Docker. */
final class Servers {

  private Servers() {}

  /** A loopback port nothing listens on now (a server started on it may still lose a race). */
  static int freePort() {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The binary named {@code name}: the path in system property {@code property} ({@code none}: as
   * if none were installed), else the first on the PATH, else {@code /usr/bin} or {@code
   * /usr/local/bin}; null when there is none.
   */
  static String findBinary(String property, String name) {
    String chosen = System.getProperty(property);
    if (chosen != null) {
      return chosen.equals("none") ? null : chosen;
    }
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator, -1)) {
      File f = new File(dir, name);
      if (f.canExecute()) {
        return f.getPath();
      }
    }
    for (String dir : new String[] {"/usr/bin", "/usr/local/bin"}) {
      File f = new File(dir, name);
      if (f.canExecute()) {
        return f.getPath();
      }
    }
    return null;
  }

  /**
   * Polls {@code condition} every 10 ms until it holds (true) or {@code timeout} passes (false).
   */
  static boolean await(Duration timeout, BooleanSupplier condition) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      if (condition.getAsBoolean()) {
        return true;
      }
      if (System.nanoTime() > deadline) {
        return false;
      }
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
  }

  /**
   * JUnit's "skipped" exception when JUnit is on the class path; the JMH jar, which also starts
   * servers through this package, does not carry it, and gets {@code otherwise}.
   */
  static RuntimeException skipped(String message, Supplier<RuntimeException> otherwise) {
    try {
      return Class.forName("org.opentest4j.TestAbortedException")
          .asSubclass(RuntimeException.class)
          .getConstructor(String.class)
          .newInstance(message);
    } catch (ReflectiveOperationException | LinkageError e) {
      return otherwise.get();
    }
  }

  /** Whether Testcontainers reaches a Docker engine. */
  static boolean dockerAvailable() {
    try {
      return DockerClientFactory.instance().isDockerAvailable();
    } catch (RuntimeException | LinkageError e) {
      return false;
    }
  }
}
