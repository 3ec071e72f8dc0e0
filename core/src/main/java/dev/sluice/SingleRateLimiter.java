package dev.sluice;

/** A {@link RateLimiter} of one policy. */
final class SingleRateLimiter implements RateLimiter {

  private final Evaluator evaluator;
  private final Policy[] policies;

  SingleRateLimiter(Evaluator evaluator, Policy policy) {
    this.evaluator = evaluator;
    this.policies = new Policy[] {policy};
  }

  @Override
  public Decision tryAcquire(String key, long permits) {
    if (key == null) {
      throw new NullPointerException("key");
    }
    return evaluator.decide(policies, new String[] {key}, 1, permits);
  }

  Policy policy() {
    return policies[0];
  }

  @Override
  public String toString() {
    Policy p = policies[0];
    return "RateLimiter{"
        + p.id
        + ", "
        + p.algorithm
        + ", "
        + java.util.Arrays.toString(p.tiers)
        + "}";
  }
}
