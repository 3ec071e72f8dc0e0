package dev.sluice;

/**
 * The answers a decision gets without counting: from the deny caches, which hold each rejected
 * identity until one permit could pass, and for a request too large to ever pass. Stateless; the
 * caches are the policies'.
 */
final class Denials {

  private Denials() {}

  /** Puts each failing policy's identity in its deny cache until one permit could pass. */
  static void remember(Call call, long now) {
    for (int e = 0; e < call.entries(); e++) {
      Call.Entry entry = call.entry(e);
      Policy p = entry.policy;
      if (p.denyCache == null) {
        continue;
      }
      long until = 0;
      Call.Counter worst = null;
      for (int t = 0; t < p.tiers.length; t++) {
        Call.Counter c = call.counter(entry.firstCounter + t);
        if (c.count.passed()) {
          continue;
        }
        long one = c.limit.retryForOne(c.count);
        if (one > 0 && now + one > until) {
          until = now + one;
          worst = c;
        }
      }
      if (worst != null) {
        p.denyCache.put(
            new DenyCache.Denial(
                entry.identity,
                until,
                worst.tier,
                Math.max(0, worst.count.used()),
                worst.count.resetAt()),
            now);
      }
    }
  }

  /**
   * Answers from a deny cache when one holds an applying policy's identity. The entry found is kept
   * in the call's entry until it lapses: entries are only ever replaced by later ones, so a kept
   * one is never wrong, at most shorter than another thread's.
   */
  @SuppressWarnings("ReferenceEquality") // the same entry: no store needed
  static boolean denied(Call call, long now, Outcome out) {
    for (int e = 0; e < call.entries(); e++) {
      Call.Entry entry = call.entry(e);
      DenyCache cache = entry.policy.denyCache;
      if (cache == null) {
        continue;
      }
      DenyCache.Denial d = entry.denial;
      if (d == null || d.untilMillis() <= now) {
        d = cache.get(entry.identity, now);
        if (d != entry.denial) {
          entry.denial = d;
        }
      }
      if (d != null) {
        Verdicts.rejected(
            out,
            entry.policy,
            entry.policy.tiers[d.tier()],
            d.used(),
            d.resetAtMillis() - now,
            d.untilMillis() - now,
            true);
        return true;
      }
    }
    return false;
  }

  /**
   * A rejection, before any store call, when {@code permits} exceed a tier's limit: such a request
   * can never pass, and counting it could only overflow.
   */
  static boolean oversized(Call call, long permits, Outcome out) {
    Policy worst = null;
    Tier tier = null;
    for (int e = 0; e < call.entries(); e++) {
      Policy p = call.entry(e).policy;
      if (permits > p.maxPermits && !p.shadow && (tier == null || p.maxPermits < tier.burst())) {
        worst = p;
        tier = p.tightest();
      }
    }
    if (tier == null) {
      return false;
    }
    Verdicts.rejected(out, worst, tier, 0, 0, tier.periodMillis(), false);
    return true;
  }
}
