package dev.sluice.yaml;

import java.time.Duration;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads periods written as in the rules file: {@code 500ms}, {@code 10s}, {@code 5m}, {@code 1h},
 * {@code 1d}.
 */
public final class Periods {

  private static final Pattern PERIOD = Pattern.compile("(\\d{1,12})\\s*(ms|s|m|h|d)");

  private Periods() {}

  /** The period, or empty if {@code text} is not one (or is zero). */
  public static Optional<Duration> parse(String text) {
    Duration d = text == null ? null : read(text);
    return d == null || d.isZero() ? Optional.empty() : Optional.of(d);
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

  /** Parses {@code 10s}, {@code 5m}, {@code 1h}, {@code 500ms}, {@code 1d}; null if malformed. */
  static Duration read(String text) {
    Matcher m = PERIOD.matcher(text.trim());
    if (!m.matches()) {
      return null;
    }
    long n = Long.parseLong(m.group(1));
    return switch (m.group(2)) {
      case "ms" -> Duration.ofMillis(n);
      case "s" -> Duration.ofSeconds(n);
      case "m" -> Duration.ofMinutes(n);
      case "h" -> Duration.ofHours(n);
      default -> Duration.ofDays(n);
    };
  }
}
