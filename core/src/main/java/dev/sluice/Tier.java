package dev.sluice;

import java.time.Duration;
import java.util.Objects;

/**
 * One limit of a rate limiter: at most {@code limit} permits per {@code period}.
 *
 * @param limit permits per period, &gt; 0
 * @param period window length: whole milliseconds, from 1 ms to 366 days
 */
public record Tier(long limit, Duration period) {

  public Tier {
    if (limit <= 0) {
      throw new IllegalArgumentException("limit must be > 0");
    }
    Objects.requireNonNull(period, "period");
    if (period.isNegative() || period.isZero()) {
      throw new IllegalArgumentException("period must be > 0");
    }
    if (period.compareTo(MAX_PERIOD) > 0) {
      throw new IllegalArgumentException("period must be at most 366d");
    }
    if (period.toMillis() <= 0 || period.toNanos() % 1_000_000 != 0) {
      throw new IllegalArgumentException("period must be whole milliseconds");
    }
  }

  /** The longest period: a year, leap day included. */
  static final Duration MAX_PERIOD = Duration.ofDays(366);

  /**
   * Two tiers of one limiter with the same period would share one counter and so count twice.
   *
   * @throws IllegalArgumentException naming the period
   */
  static void checkDistinctPeriods(java.util.List<Tier> tiers) {
    for (int i = 0; i < tiers.size(); i++) {
      for (int j = 0; j < i; j++) {
        if (tiers.get(i).period.equals(tiers.get(j).period)) {
          throw new IllegalArgumentException(
              "tiers["
                  + j
                  + "] and tiers["
                  + i
                  + "] have the same period "
                  + Rule.format(tiers.get(i).period)
                  + " (one counter per period: keep the smaller limit)");
        }
      }
    }
  }

  /** Shorthand for {@code new Tier(limit, period)}. */
  public static Tier of(long limit, Duration period) {
    return new Tier(limit, period);
  }

  long periodMillis() {
    return period.toMillis();
  }
}
