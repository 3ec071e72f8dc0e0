package dev.sluice.shedding;

import java.time.Duration;

/**
 * How much traffic an overloaded instance sheds, after Stripe's worker-utilization load shedder. A
 * shedding amount moves slowly with utilization: below {@link #END_OF_GOOD} it falls, in the dead
 * zone up to {@link #START_OF_BAD} it holds, above it rises, at most one whole amount per {@code
 * ramp} (120 s). It rests at {@code -delay / ramp}, so sustained full overload takes {@code delay}
 * (28 s) before any shedding starts, and no jump in the clock moves it by more than {@code delay}'s
 * worth (or a second's, for a delay under a second). The amount is spread over the sheddable
 * classes, lowest first: with three, 0 to 1/3 sheds the lowest class from 0 to 100 %, then the
 * next. Not thread-safe; {@link LoadShedder} calls it under a lock.
 */
final class SheddingController {

  /** Utilization below which shedding falls. */
  static final double END_OF_GOOD = 0.7;

  /** Utilization above which shedding rises. */
  static final double START_OF_BAD = 0.8;

  static final Duration DEFAULT_DELAY = Duration.ofSeconds(28);
  static final Duration DEFAULT_RAMP = Duration.ofMinutes(2);

  private final double delaySeconds;
  private final double rampSeconds;
  private final double resting;
  private double amount;
  private long lastMillis = Long.MIN_VALUE;

  SheddingController(Duration delay, Duration ramp) {
    this.delaySeconds = delay.toMillis() / 1000.0;
    this.rampSeconds = ramp.toMillis() / 1000.0;
    if (delaySeconds < 0 || rampSeconds <= 0) {
      throw new IllegalArgumentException("delay must be >= 0 and ramp > 0");
    }
    this.resting = -delaySeconds / rampSeconds;
    this.amount = resting;
  }

  /** Moves the amount by the time since the last update at the rate {@code utilization} sets. */
  double update(double utilization, long nowMillis) {
    double direction;
    if (utilization < END_OF_GOOD) {
      direction = utilization / END_OF_GOOD - 1;
    } else if (utilization < START_OF_BAD) {
      direction = 0;
    } else {
      direction = (utilization - START_OF_BAD) / (1 - START_OF_BAD);
    }
    double rate = clamp(direction, -1, 1) / rampSeconds;
    double seconds =
        lastMillis == Long.MIN_VALUE
            ? 0
            : clamp((nowMillis - lastMillis) / 1000.0, 0, Math.max(1, delaySeconds));
    lastMillis = nowMillis;
    amount = clamp(amount + seconds * rate, resting, 1);
    return amount;
  }

  /** The current amount, from {@code -delay / ramp} (resting) to 1 (everything sheddable). */
  double amount() {
    return amount;
  }

  /**
   * The chance a request is shed, for an amount and the request's rank among {@code ranks}
   * sheddable ranks (1 = shed first); 0 for rank 0 (critical, never shed).
   */
  static double dropChance(double amount, int rank, int ranks) {
    if (rank <= 0 || ranks <= 0 || amount <= 0) {
      return 0;
    }
    return clamp(amount * ranks - (rank - 1), 0, 1);
  }

  private static double clamp(double v, double min, double max) {
    return Math.max(min, Math.min(max, v));
  }
}
