package dev.sluice;

import dev.sluice.algorithm.WindowLimit;

/** How a limiter counts a window. */
public enum Algorithm {
  /**
   * Sliding window, fixed rate (Cloudflare's counter): {@code previous × (1 − f) + current}, with
   * {@code f} the elapsed fraction of the current window. Smooth at window edges.
   */
  SLIDING_WINDOW {
    @Override
    WindowLimit limit(Tier tier, boolean staggered) {
      return WindowLimit.sliding(tier.limit(), tier.periodMillis());
    }

    @Override
    boolean staggers() {
      return false;
    }
  },
  /** Fixed window: at most {@code limit} per window, counted from the window boundary. */
  FIXED_WINDOW {
    @Override
    WindowLimit limit(Tier tier, boolean staggered) {
      return WindowLimit.fixed(tier.limit(), tier.periodMillis(), staggered);
    }

    @Override
    boolean staggers() {
      return true;
    }
  },
  /**
   * Concurrent requests: at most {@code limit} in flight per identity, each holding a slot until it
   * completes ({@link Engine#slots}). The tier's period is the slots' time to live: a slot never
   * given back (its instance died) comes back within two periods.
   */
  CONCURRENCY {
    @Override
    WindowLimit limit(Tier tier, boolean staggered) {
      return WindowLimit.concurrent(tier.limit(), tier.periodMillis());
    }

    @Override
    boolean staggers() {
      return false;
    }
  };

  /** One tier under this algorithm. */
  abstract WindowLimit limit(Tier tier, boolean staggered);

  /** Whether window boundaries can be staggered per identity. */
  abstract boolean staggers();

  /**
   * Checks a {@code staggerWindows} setting against the algorithm; the one place it is checked.
   *
   * @throws IllegalArgumentException if staggering is asked of an algorithm that cannot
   */
  public void checkStagger(boolean staggered) {
    if (staggered && !staggers()) {
      throw new IllegalArgumentException("staggerWindows applies to the fixed window only");
    }
  }
}
