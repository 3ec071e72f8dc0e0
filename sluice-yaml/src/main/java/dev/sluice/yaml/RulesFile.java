package dev.sluice.yaml;

import dev.sluice.Background;
import dev.sluice.http.RequestLimiter;
import dev.sluice.http.RuleSet;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps a {@link RequestLimiter} in step with its rules file: checks the file every interval and
 * puts a changed file in force at once. A bad edit is logged in one line with its line and field
 * (an {@code app:} key naming no key resolver the limiter has among them), and the last good rules
 * stay in force. {@link #close()} stops the checks. Thread-safe.
 */
public final class RulesFile implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(RulesFile.class);

  private final Path file;
  private final RequestLimiter limiter;

  /** The periodic check; null when the file is read only on {@link #reload()}. */
  private final ScheduledFuture<?> task;

  private byte[] last;

  /** What was last logged about the file being unreadable; null while it reads. */
  private String problem;

  private RulesFile(
      Path file, RequestLimiter limiter, Duration interval, ScheduledExecutorService scheduler) {
    this.file = file;
    this.limiter = limiter;
    this.last = read();
    long ms = interval.toMillis();
    this.task =
        ms == 0
            ? null
            : scheduler.scheduleWithFixedDelay(this::reload, ms, ms, TimeUnit.MILLISECONDS);
  }

  /**
   * Watches {@code file} for {@code limiter}, checking every {@code interval} (zero: only when
   * {@link #reload()} is called) on the JVM's {@link Background#shared()} scheduler. The limiter
   * should already hold the file's rules.
   */
  public static RulesFile watch(Path file, RequestLimiter limiter, Duration interval) {
    return watch(file, limiter, interval, Background.shared());
  }

  /** {@link #watch(Path, RequestLimiter, Duration)}, checking on {@code scheduler}. */
  public static RulesFile watch(
      Path file, RequestLimiter limiter, Duration interval, ScheduledExecutorService scheduler) {
    if (interval.isNegative()) {
      throw new IllegalArgumentException("interval must be >= 0");
    }
    return new RulesFile(file, limiter, interval, scheduler);
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
              new String(now, java.nio.charset.StandardCharsets.UTF_8),
              file.toString(),
              limiter.keyResolvers());
      limiter.update(rules);
      LOG.info("reloaded rules from {}", file);
      return true;
    } catch (RulesException e) {
      LOG.error("rules file edit ignored, the last good rules stay in force: {}", e.getMessage());
      return false;
    } catch (IllegalArgumentException e) {
      // Rules the limiter refused (a rule id that a bound rule holds): one line, as above.
      LOG.error(
          "rules file edit ignored, the last good rules stay in force: {}: {}",
          file,
          e.getMessage());
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
    if (task != null) {
      task.cancel(false);
    }
  }
}
