package dev.sluice;

import java.time.Duration;
import java.util.Objects;

/**
 * One limit of a rate limiter: at most {@code limit} permits per {@code period}.
 *
 * <p>Limits and bursts are at most {@link #MAX_LIMIT} (10<sup>15</sup>), so no count a store keeps
 * for them comes near {@link Long#MAX_VALUE}: a request asks for at most its tightest burst, and a
 * count reaches 2<sup>63</sup> only after some 9,000 such requests pile up on one key beyond its
 * limit, each awaiting its refund. A sliding window's estimate is a {@code double}, exact for
 * counts below 2<sup>53</sup>, which this bound keeps too.
 *
 * @param limit permits per period, &gt; 0 and at most {@link #MAX_LIMIT}
 * @param period window length: whole milliseconds, from 1 ms to 366 days
 * @param burst the most permits the tier lets through at once, its capacity: {@code limit} for a
 *     window; for a token bucket ({@link Algorithm#TOKEN_BUCKET}) the bucket's size, which refills
 *     at {@code limit} per {@code period}
 */
public record Tier(long limit, Duration period, long burst) {

  /**
   * Checks the values.
   *
   * @param limit permits per period, &gt; 0
   * @param period window length: whole milliseconds, from 1 ms to 366 days
   * @param burst the most permits the tier lets through at once
   * @throws IllegalArgumentException for a limit or burst not &gt; 0, or a period out of range or
   *     not whole milliseconds
   */
  public Tier {
    if (limit <= 0) {
      throw new IllegalArgumentException("limit must be > 0");
    }
    if (limit > MAX_LIMIT) {
      throw new IllegalArgumentException(
          "limit must be at most " + MAX_LIMIT + " (10^15), was " + limit);
    }
    if (burst <= 0) {
      throw new IllegalArgumentException("burst must be > 0");
    }
    if (burst > MAX_LIMIT) {
      throw new IllegalArgumentException(
          "burst must be at most " + MAX_LIMIT + " (10^15), was " + burst);
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

  /**
   * At most {@code limit} permits per {@code period}, all of which may come at once.
   *
   * @param limit permits per period, &gt; 0
   * @param period window length: whole milliseconds, from 1 ms to 366 days
   */
  public Tier(long limit, Duration period) {
    this(limit, period, limit);
  }

  /**
   * The most tokens a token bucket ({@link Algorithm#TOKEN_BUCKET}) holds, and refills per period:
   * the largest {@code limit} and {@code burst} a bucket's tier takes.
   */
  public static final long MAX_BUCKET_TOKENS = dev.sluice.algorithm.TierLimit.MAX_BUCKET_TOKENS;

  /** The largest limit or burst: 10<sup>15</sup>. */
  public static final long MAX_LIMIT = 1_000_000_000_000_000L;

  /** The longest period: a year, leap day included. */
  static final Duration MAX_PERIOD = Duration.ofDays(366);

  /**
   * Checks the tiers of one limit: at least one, and no two with the same period (they would share
   * one counter and so count twice).
   *
   * @param tiers the tiers of one limit
   * @throws IllegalArgumentException naming the problem
   */
  public static void checkTiers(java.util.List<Tier> tiers) {
    if (tiers.isEmpty()) {
      throw new IllegalArgumentException("tiers: at least one tier is required");
    }
    for (int i = 0; i < tiers.size(); i++) {
      for (int j = 0; j < i; j++) {
        if (tiers.get(i).period.equals(tiers.get(j).period)) {
          throw new IllegalArgumentException(
              "tiers["
                  + j
                  + "] and tiers["
                  + i
                  + "] have the same period "
                  + tiers.get(i).periodText()
                  + " (one counter per period: keep the smaller limit)");
        }
      }
    }
  }

  /**
   * The period as headers and logs name it: whole seconds ({@code 60s}) or else milliseconds
   * ({@code 500ms}).
   *
   * @return e.g. {@code 60s}
   */
  public String periodText() {
    long ms = period.toMillis();
    return ms % 1_000 == 0 ? ms / 1_000 + "s" : ms + "ms";
  }

  /**
   * {@code limit/period}, e.g. {@code 100/60s}, and a burst that differs: {@code 60/60s burst 5}.
   */
  @Override
  public String toString() {
    return limit + "/" + periodText() + (burst == limit ? "" : " burst " + burst);
  }

  /**
   * Shorthand for {@code new Tier(limit, period)}.
   *
   * @param limit permits per period, &gt; 0
   * @param period window length: whole milliseconds, from 1 ms to 366 days
   * @return the tier
   */
  public static Tier of(long limit, Duration period) {
    return new Tier(limit, period);
  }

  /**
   * Shorthand for {@code new Tier(limit, period, burst)}: a token bucket's tier.
   *
   * @param limit tokens refilled per period, &gt; 0
   * @param period the refill period: whole milliseconds, from 1 ms to 366 days
   * @param burst the bucket's size, &gt; 0
   * @return the tier
   */
  public static Tier of(long limit, Duration period, long burst) {
    return new Tier(limit, period, burst);
  }

  long periodMillis() {
    return period.toMillis();
  }
}
