package dev.sluice.yaml;

import dev.sluice.http.RequestLimiter;
import dev.sluice.http.RuleSet;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps a {@link RequestLimiter} in step with its rules file: checks the file every interval and
 * puts a changed file in force at once. A bad edit is logged with its line and field, and the last
 * good rules stay in force. One daemon thread; {@link #close()} stops it. Thread-safe.
 */
public final class RulesFile implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(RulesFile.class);

  private final Path file;
  private final RequestLimiter limiter;
  private final ScheduledExecutorService timer;
  private byte[] last;

  /** What was last logged about the file being unreadable; null while it reads. */
  private String problem;

  private RulesFile(Path file, RequestLimiter limiter, Duration interval) {
    this.file = file;
    this.limiter = limiter;
    this.last = read();
    if (interval.isZero()) {
      this.timer = null;
    } else {
      this.timer =
          Executors.newSingleThreadScheduledExecutor(
              r -> {
                Thread t = new Thread(r, "sluice-rules-watch");
                t.setDaemon(true);
                return t;
              });
      long ms = interval.toMillis();
      java.util.concurrent.ScheduledFuture<?> unused =
          timer.scheduleWithFixedDelay(this::reload, ms, ms, TimeUnit.MILLISECONDS);
    }
  }

  /**
   * Watches {@code file} for {@code limiter}, checking every {@code interval} (zero: only when
   * {@link #reload()} is called). The limiter should already hold the file's rules.
   */
  public static RulesFile watch(Path file, RequestLimiter limiter, Duration interval) {
    if (interval.isNegative()) {
      throw new IllegalArgumentException("interval must be >= 0");
    }
    return new RulesFile(file, limiter, interval);
  }

  /**
   * Reads the file now; if it changed and is valid, puts it in force.
   *
   * @return true when new rules were put in force
   */
  public synchronized boolean reload() {
    byte[] now = read();
    if (now == null || Arrays.equals(now, last)) {
      return false;
    }
    last = now;
    try {
      RuleSet rules =
          YamlRules.parse(
              new String(now, java.nio.charset.StandardCharsets.UTF_8), file.toString());
      limiter.update(rules);
      LOG.info("reloaded rules from {}", file);
      return true;
    } catch (RulesException e) {
      LOG.error("rules file edit ignored, the last good rules stay in force: {}", e.getMessage());
      return false;
    } catch (RuntimeException e) {
      LOG.error("rules file edit ignored, the last good rules stay in force", e);
      return false;
    }
  }

  /**
   * The file's bytes, or null; a problem is logged once, until the file reads again or the problem
   * changes.
   */
  private synchronized byte[] read() {
    try {
      byte[] bytes = Files.readAllBytes(file);
      if (problem != null) {
        LOG.info("rules file {} can be read again", file);
        problem = null;
      }
      return bytes;
    } catch (IOException e) {
      String now = YamlRules.describe(e);
      if (!now.equals(problem)) {
        LOG.warn(
            "cannot read rules file {}: {}; the rules in force stay (logged again only if this changes)",
            file,
            now);
        problem = now;
      }
      return null;
    }
  }

  @Override
  public void close() {
    if (timer != null) {
      timer.shutdownNow();
    }
  }
}
