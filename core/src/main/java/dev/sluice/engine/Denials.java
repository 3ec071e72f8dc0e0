package dev.sluice.engine;

import dev.sluice.Tier;

/**
 * The answers a decision gets without counting: from the deny caches, which hold each rejected
 * identity until one permit could pass, and for a request too large to ever pass. A deny cache's
 * answer names the same quotas as the store's, reckoned from what the store last said of each
 * ({@link Recall}). Stateless; the caches are the policies'.
 */
final class Denials {

  private Denials() {}

  /**
   * Puts each failing policy's identity in its deny cache until one permit could pass, and, when
   * any was put, keeps every applying policy's figures for as long ({@link Recall#keep}); else
   * refreshes the figures kept.
   */
  static void remember(Call call, long now) {
    long latest = 0;
    for (int e = 0; e < call.entries(); e++) {
      Entry entry = call.entry(e);
      Policy p = entry.policy;
      if (p.denyCache == null) {
        continue;
      }
      long until = 0;
      Counter worst = null;
      for (int t = 0; t < p.tiers.length; t++) {
        Counter c = call.counter(entry.firstCounter + t);
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
        latest = Math.max(latest, until);
      }
    }
    if (latest == 0) {
      refresh(call, now);
      return;
    }
    for (int e = 0; e < call.entries(); e++) {
      Entry entry = call.entry(e);
      if (entry.policy.recall != null) {
        entry.policy.recall.keep(call, entry, latest, now);
      }
    }
  }

  /**
   * Replaces the figures kept of each applying policy with what the store just said; nothing to do
   * unless some identity is kept. The fleet's shedder is left out: every request counts on its one
   * counter, and its in-flight figure is no client's quota.
   */
  static void refresh(Call call, long now) {
    for (int e = 0; e < call.entries(); e++) {
      Entry entry = call.entry(e);
      Recall r = entry.policy.recall;
      if (r != null && !entry.policy.shedding) {
        r.refresh(call, entry, now);
      }
    }
  }

  /**
   * Whether a deny cache holds an applying policy's identity. The entry found is kept in the call's
   * entry until it lapses: entries are only ever replaced by later ones, so a kept one is never
   * wrong, at most shorter than another thread's.
   */
  @SuppressWarnings("ReferenceEquality") // the same entry: no store needed
  static boolean anyDenied(Call call, long now) {
    boolean denied = false;
    for (int e = 0; e < call.entries(); e++) {
      Entry entry = call.entry(e);
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
      denied |= d != null;
    }
    return denied;
  }

  /**
   * Answers a request some deny cache holds ({@link #anyDenied}), its counters laid out and
   * located: each tier reckoned from the figures last kept for it, as the store would have answered
   * had it counted and refunded the request. No answer (false) when a policy's figures are not
   * kept, or when they let the request through, or refuse it only by a concurrency rule (whose
   * slots free without a store's answer): then the store decides.
   */
  static boolean answer(Call call, long now, Answer out) {
    for (int e = 0; e < call.entries(); e++) {
      Entry entry = call.entry(e);
      Recall r = entry.policy.recall;
      Recall.Figures f = r == null ? null : r.get(entry.identity, now);
      if (f == null || !recall(call, entry, f, now)) {
        return false;
      }
    }
    if (call.judge()) {
      return false;
    }
    for (int i = 0; i < call.size(); i++) {
      Counter c = call.counter(i);
      if (!c.count.passed() && !c.entry.policy.shadow && c.limit.heldUntilReleased()) {
        return false;
      }
    }
    call.withdraw(false);
    Verdicts.refused(out, now, call, true);
    return true;
  }

  /**
   * Sets each of {@code entry}'s counters to what the store would answer now, from figures {@code
   * f}, had it counted the request: a window's count carried into the window that holds now (the
   * next window's previous one, or nothing further on), a running counter raised to its floor.
   * False when the figures are of a later window than now's (the clock went back).
   */
  private static boolean recall(Call call, Entry entry, Recall.Figures f, long now) {
    for (int t = 0; t < entry.policy.tiers.length; t++) {
      Counter c = call.counter(entry.firstCounter + t);
      long delta = c.limit.delta(call.permits);
      long floor = c.limit.floor(now);
      long settled = f.settled(t);
      long window = f.window(t);
      if (floor > 0) {
        c.current = Math.max(settled, floor) + delta;
        c.previous = f.previous(t);
      } else if (c.window == window) {
        c.current = settled + delta;
        c.previous = f.previous(t);
      } else if (c.window == window + 1) {
        c.current = delta;
        c.previous = settled;
      } else if (c.window > window) {
        c.current = delta;
        c.previous = 0;
      } else {
        return false;
      }
    }
    return true;
  }

  /**
   * A rejection, before any store call, when {@code permits} exceed a tier's limit: such a request
   * can never pass, and counting it could only overflow.
   */
  static boolean oversized(Call call, long permits, Answer out) {
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
    Verdicts.rejected(out, worst, tier, 0, 0, tier.period().toMillis());
    return true;
  }
}
