package dev.sluice.engine;

import dev.sluice.RateLimiter;

/** What the engine's tests in other modules reach inside a limiter. */
public final class EngineAccess {

  private EngineAccess() {}

  /** The local layer of {@code limiter}'s two-layer policies. */
  public static TwoLayer twoLayer(RateLimiter limiter) {
    return ((SingleRateLimiter) limiter).engine().twoLayer();
  }
}
