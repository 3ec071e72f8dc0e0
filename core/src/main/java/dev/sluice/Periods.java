package dev.sluice;

import java.time.Duration;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Periods and durations as Sluice's text settings write them (the rules file, {@code @RateLimited},
 * a store's settings, the command line): {@code 500ms}, {@code 10s}, {@code 5m}, {@code 1h}, {@code
 * 1d}.
 */
public final class Periods {

  private static final Pattern PERIOD = Pattern.compile("(\\d{1,12})\\s*(ms|s|m|h|d)");

  private Periods() {}

  /** The period, or empty if {@code text} is not one (or is zero). */
  public static Optional<Duration> parse(String text) {
    return read(text).filter(d -> !d.isZero());
  }

  /**
   * A period as the rules file writes it, in its largest whole unit: {@code 1d}, {@code 2h}, {@code
   * 5m}, {@code 10s} or {@code 500ms}.
   */
  public static String format(Duration d) {
    long ms = d.toMillis();
    if (ms % 86_400_000 == 0) {
      return ms / 86_400_000 + "d";
    }
    if (ms % 3_600_000 == 0) {
      return ms / 3_600_000 + "h";
    }
    if (ms % 60_000 == 0) {
      return ms / 60_000 + "m";
    }
    if (ms % 1_000 == 0) {
      return ms / 1_000 + "s";
    }
    return ms + "ms";
  }

  /** The duration {@code text} writes, zero included, or empty if it is malformed. */
  public static Optional<Duration> read(String text) {
    Matcher m = PERIOD.matcher(text == null ? "" : text.trim());
    if (!m.matches()) {
      return Optional.empty();
    }
    long n = Long.parseLong(m.group(1));
    return Optional.of(
        switch (m.group(2)) {
          case "ms" -> Duration.ofMillis(n);
          case "s" -> Duration.ofSeconds(n);
          case "m" -> Duration.ofMinutes(n);
          case "h" -> Duration.ofHours(n);
          default -> Duration.ofDays(n);
        });
  }
}
