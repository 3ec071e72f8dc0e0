package dev.sluice.rules;

import java.time.Duration;

/**
 * Reads periods written as in the rules file: {@code 500ms}, {@code 10s}, {@code 5m}, {@code 1h},
 * {@code 1d}.
 */
public final class Periods {

  private Periods() {}

  /** The period, or null if {@code text} is not one (or is zero). */
  public static Duration parse(String text) {
    Duration d = text == null ? null : YamlRules.period(text);
    return d == null || d.isZero() ? null : d;
  }
}
