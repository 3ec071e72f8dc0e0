package dev.sluice.engine;

import dev.sluice.Outcome;
import dev.sluice.RateLimiter;

/** A {@link RateLimiter} of one policy. */
final class SingleRateLimiter implements RateLimiter {

  private final Engine engine;
  private final Policy policy;

  SingleRateLimiter(Engine engine, Policy policy) {
    this.engine = engine;
    this.policy = policy;
  }

  @Override
  public boolean tryAcquire(String key, long permits, Outcome out) {
    if (key == null) {
      throw new NullPointerException("key");
    }
    engine.begin(out);
    engine.add(out, policy, key);
    return engine.decide(out, permits);
  }

  Policy policy() {
    return policy;
  }

  Engine engine() {
    return engine;
  }

  @Override
  public String toString() {
    return "RateLimiter{"
        + policy.id
        + ", "
        + policy.algorithm
        + ", "
        + java.util.Arrays.toString(policy.tiers)
        + "}";
  }
}
