package dev.sluice.cli;

import java.io.PrintWriter;

/**
 * A one-line progress bar on standard error, drawn only when the command runs on a terminal and
 * redrawn at most ten times a second.
 */
final class Progress {

  private final PrintWriter err;
  private final boolean shown;
  private final long total;
  private final long startNanos = System.nanoTime();
  private long lastDraw;
  private long done;

  Progress(PrintWriter err, long total, boolean shown) {
    this.err = err;
    this.total = Math.max(1, total);
    this.shown = shown;
  }

  /** Shown on a terminal (a console, with output not redirected). */
  @SuppressWarnings("SystemConsoleNull") // JDK 17: a console exists only on a terminal
  static boolean onTerminal() {
    java.io.Console c = System.console();
    if (c == null) {
      return false;
    }
    try {
      // JDK 22 and later give a console even when redirected; ask it.
      return (Boolean) java.io.Console.class.getMethod("isTerminal").invoke(c);
    } catch (NoSuchMethodException e) {
      return true;
    } catch (ReflectiveOperationException e) {
      return false;
    }
  }

  void update(long doneSoFar, String detail) {
    done = doneSoFar;
    if (!shown) {
      return;
    }
    long now = System.nanoTime();
    if (now - lastDraw < 100_000_000L) {
      return;
    }
    lastDraw = now;
    draw(detail);
  }

  void finish(String detail) {
    if (shown) {
      draw(detail);
      err.print("\n");
      err.flush();
    }
  }

  /** Seconds since the bar was made. */
  double seconds() {
    return Math.max(1e-9, (System.nanoTime() - startNanos) / 1e9);
  }

  private void draw(String detail) {
    int width = 30;
    int filled = (int) Math.min(width, done * width / total);
    err.printf(
        "\r[%s%s] %3d%%  %s ",
        "#".repeat(filled), " ".repeat(width - filled), Math.min(100, done * 100 / total), detail);
    err.flush();
  }
}
