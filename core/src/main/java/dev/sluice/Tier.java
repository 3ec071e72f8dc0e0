package dev.sluice;

import java.time.Duration;
import java.util.Objects;

/**
 * One limit of a rate limiter: at most {@code limit} permits per {@code period}.
 *
 * @param limit permits per period, &gt; 0
 * @param period window length, at least one millisecond, in whole milliseconds
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
    if (period.toMillis() <= 0 || period.toNanos() % 1_000_000 != 0) {
      throw new IllegalArgumentException("period must be whole milliseconds");
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
