package dev.sluice;

import dev.sluice.algorithm.TierLimit;

/** How a limiter counts a window. */
public enum Algorithm {
  /**
   * Sliding window, fixed rate (Cloudflare's counter): {@code previous × (1 − f) + current}, with
   * {@code f} the elapsed fraction of the current window. Smooth at window edges.
   */
  SLIDING_WINDOW {
    @Override
    TierLimit limit(Tier tier, boolean staggered) {
      return TierLimit.sliding(tier.limit(), tier.periodMillis());
    }

    @Override
    boolean staggers() {
      return false;
    }
  },
  /** Fixed window: at most {@code limit} per window, counted from the window boundary. */
  FIXED_WINDOW {
    @Override
    TierLimit limit(Tier tier, boolean staggered) {
      return TierLimit.fixed(tier.limit(), tier.periodMillis(), staggered);
    }

    @Override
    boolean staggers() {
      return true;
    }
  },
  /**
   * Concurrent requests: at most {@code limit} in flight per identity, each holding a slot until it
   * completes ({@link Slots}). The tier's period is the slots' time to live: a slot never given
   * back (its instance died) comes back within two periods.
   */
  CONCURRENCY {
    @Override
    TierLimit limit(Tier tier, boolean staggered) {
      return TierLimit.concurrent(tier.limit(), tier.periodMillis());
    }

    @Override
    boolean staggers() {
      return false;
    }
  },
  /**
   * Token bucket, exact (GCRA): a bucket of {@link Tier#burst} tokens refilled at {@code limit} per
   * {@code period}. One tier per policy; one store operation per decision, plus a refund when
   * refused.
   */
  TOKEN_BUCKET {
    @Override
    TierLimit limit(Tier tier, boolean staggered) {
      return TierLimit.tokenBucket(tier.limit(), tier.periodMillis(), tier.burst());
    }

    @Override
    boolean staggers() {
      return false;
    }
  };

  /** One tier under this algorithm. */
  abstract TierLimit limit(Tier tier, boolean staggered);

  /** Whether window boundaries can be staggered per identity. */
  abstract boolean staggers();

  /**
   * Checks a two-layer ({@link Sync}) setting against the algorithm: only windows count locally.
   *
   * @throws IllegalArgumentException if sync is asked of a token bucket or a concurrency limit
   */
  public void checkSync(boolean synced) {
    if (synced && this != SLIDING_WINDOW && this != FIXED_WINDOW) {
      throw new IllegalArgumentException(
          "sync (two-layer counting) applies to the sliding and fixed windows only");
    }
  }

  /**
   * Checks a policy's tiers against the algorithm: a token bucket has exactly one tier, and only a
   * token bucket has a burst that differs from its limit.
   *
   * @throws IllegalArgumentException naming the problem
   */
  public void checkTiers(java.util.List<Tier> tiers) {
    if (this == TOKEN_BUCKET) {
      if (tiers.size() != 1) {
        throw new IllegalArgumentException(
            "a token bucket has one tier (limit, period, burst); use another rule for another rate");
      }
      var unused = limit(tiers.get(0), false);
      return;
    }
    for (Tier t : tiers) {
      if (t.burst() != t.limit()) {
        throw new IllegalArgumentException("burst applies to the token bucket only");
      }
    }
  }

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
