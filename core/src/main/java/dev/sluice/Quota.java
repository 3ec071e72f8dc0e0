package dev.sluice;

import java.time.Duration;

/**
 * Where one tier of one policy stood after a decision.
 *
 * @param policy the rule or limiter id
 * @param tier the tier
 * @param used permits counted in the window (the sliding estimate, rounded up), after any refund
 * @param remaining permits left before this tier rejects, never negative
 * @param resetAfter how long until the tier's count is back to zero if nothing else arrives
 * @param shadow whether the policy only reports (never rejects)
 * @param exceeded whether this tier refused the request (for a shadow policy: would have)
 */
public record Quota(
    String policy,
    Tier tier,
    long used,
    long remaining,
    Duration resetAfter,
    boolean shadow,
    boolean exceeded) {

  /** {@return the tier's capacity ({@link Tier#burst}): its limit, or a token bucket's size} */
  public long limit() {
    return tier.burst();
  }
}
