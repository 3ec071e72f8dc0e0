package dev.sluice.engine;

import dev.sluice.Algorithm;
import dev.sluice.StoreStatus;
import dev.sluice.Tier;
import dev.sluice.algorithm.Count;

/**
 * The engine's writes into an {@link Answer}: one method per way a decision ends. Outcomes reused
 * for the same policy already hold the same references, and keep them: a reference store costs a
 * garbage collector's write barrier, a comparison does not.
 */
final class Verdicts {

  private Verdicts() {}

  /** Nothing applied: allowed, and nothing to report. The other verdicts' starting point. */
  static void none(Answer out) {
    out.applied = false;
    out.allowed = true;
    out.policy = "";
    out.tier = null;
    out.used = 0;
    out.remaining = 0;
    out.resetAfterMillis = 0;
    out.retryAfterMillis = 0;
    out.bindingShadow = false;
    out.bindingExceeded = false;
    out.storeStatus = StoreStatus.OK;
    out.shadowRejected = false;
    out.cached = false;
    out.scope = Answer.Scope.NONE;
    out.shed = false;
    out.priorityClass = "";
  }

  /**
   * A refusal from the call's counters, refunds withdrawn: the counter that frees last binds, and
   * one that never frees for this request retries after its period. {@code cached}: reckoned from
   * what the store last said, the deny cache answering.
   */
  static void refused(Answer out, long now, Call call, boolean cached) {
    Counter binding = latestRetry(call);
    long retry = binding.count.retryMillis();
    counted(
        out,
        now,
        false,
        binding,
        retry == Count.NEVER ? binding.limit.periodMillis() : retry,
        false,
        cached);
  }

  /**
   * A decision from the call's counters, {@code binding} the one that decided: counted by the
   * store, or reckoned from what it last said when the deny cache answered ({@code cached}).
   */
  static void counted(
      Answer out,
      long now,
      boolean allowed,
      Counter binding,
      long retryAfter,
      boolean shadowRejected,
      boolean cached) {
    out.now = now;
    out.applied = true;
    out.allowed = allowed;
    Policy p = binding.entry.policy;
    Tier t = binding.tier();
    names(out, p, t, Answer.Scope.ALL);
    out.used = Math.max(0, binding.count.used());
    out.remaining = Math.max(0, t.burst() - out.used);
    out.resetAfterMillis = Math.max(0, binding.count.resetAt() - now);
    out.bindingShadow = p.shadow;
    out.bindingExceeded = !binding.count.passed();
    out.shed = p.shedding;
    out.retryAfterMillis = retryAfter;
    out.shadowRejected = shadowRejected;
    out.cached = cached;
  }

  /**
   * Sets the binding policy and tier, what the outcome reports, a store that answered and no class.
   */
  @SuppressWarnings("ReferenceEquality") // the same object, not an equal one
  private static void names(Answer out, Policy p, Tier t, Answer.Scope scope) {
    if (out.policy != p.id) {
      out.policy = p.id;
    }
    if (out.tier != t) {
      out.tier = t;
    }
    if (out.algorithm != p.algorithm) {
      out.algorithm = p.algorithm;
    }
    if (out.scope != scope) {
      out.scope = scope;
    }
    if (out.storeStatus != StoreStatus.OK) {
      out.storeStatus = StoreStatus.OK;
    }
    if (!out.priorityClass.isEmpty()) {
      out.priorityClass = "";
    }
  }

  /** A rejection with the binding quota alone: the request can never pass. */
  static void rejected(
      Answer out, Policy p, Tier tier, long used, long resetAfterMillis, long retryAfterMillis) {
    out.applied = true;
    out.allowed = false;
    names(out, p, tier, Answer.Scope.BINDING);
    out.used = used;
    out.remaining = Math.max(0, tier.burst() - used);
    out.resetAfterMillis = Math.max(0, resetAfterMillis);
    out.retryAfterMillis = retryAfterMillis;
    out.bindingShadow = false;
    out.bindingExceeded = true;
    out.shadowRejected = false;
    out.cached = false;
    out.shed = p.shedding;
  }

  /** The store (or the limiter) failed: decided without counts by {@code binding}'s setting. */
  static void withoutCounts(Answer out, Policy binding) {
    boolean closed = binding.failClosed && !binding.shadow;
    Tier t = binding.tiers[0];
    none(out);
    out.applied = true;
    out.allowed = !closed;
    out.policy = binding.id;
    out.algorithm = binding.algorithm;
    out.tier = t;
    out.remaining = t.burst();
    out.resetAfterMillis = t.period().toMillis();
    out.retryAfterMillis = closed ? Evaluator.FAIL_CLOSED_RETRY_MILLIS : 0;
    out.bindingShadow = binding.shadow;
    out.bindingExceeded = closed;
    out.storeStatus = closed ? StoreStatus.FAILED_CLOSED : StoreStatus.FAILED_OPEN;
  }

  /** Decided by this instance's local counters because the store failed. */
  static void decidedLocally(Answer out) {
    out.storeStatus = StoreStatus.LOCAL;
  }

  /**
   * Refused by this instance's worker-utilization shedder: a 503, with no quota to report ({@code
   * tier} only names the shedder's capacity); the priority class stays.
   */
  static void shedByWorkers(Answer out, String shedder, Tier tier, long retryAfterMillis) {
    String priorityClass = out.priorityClass;
    none(out);
    out.applied = true;
    out.allowed = false;
    out.policy = shedder;
    out.algorithm = Algorithm.CONCURRENCY;
    out.tier = tier;
    out.used = tier.limit();
    out.resetAfterMillis = retryAfterMillis;
    out.retryAfterMillis = retryAfterMillis;
    out.bindingExceeded = true;
    out.shed = true;
    out.priorityClass = priorityClass;
  }

  /**
   * The tier that describes the request best: the rate tier with the fewest permits left; a
   * concurrency rule's only when no rate tier applies (its slots are no quota per window); a shadow
   * policy's or the fleet's shedder's only when nothing else applies.
   */
  static Counter leastRemaining(Call call) {
    Counter best = call.counter(0);
    for (int i = 1; i < call.size(); i++) {
      Counter c = call.counter(i);
      int rank = rank(c);
      int bestRank = rank(best);
      if (rank < bestRank || (rank == bestRank && remaining(c) < remaining(best))) {
        best = c;
      }
    }
    return best;
  }

  /** 0 for a client's rate tier, 1 for a concurrency rule, 2 for what describes no client. */
  private static int rank(Counter c) {
    Policy p = c.entry.policy;
    if (p.shadow || p.shedding) {
      return 2;
    }
    return p.algorithm == Algorithm.CONCURRENCY ? 1 : 0;
  }

  private static long remaining(Counter c) {
    return c.limit.limit() - Math.max(0, c.count.used());
  }

  /** The failing, non-shadow tier that frees last. */
  static Counter latestRetry(Call call) {
    Counter best = null;
    for (int i = 0; i < call.size(); i++) {
      Counter c = call.counter(i);
      if (!c.count.passed()
          && !c.entry.policy.shadow
          && (best == null
              || unsigned(c.count.retryMillis()) > unsigned(best.count.retryMillis()))) {
        best = c;
      }
    }
    return best;
  }

  private static long unsigned(long retry) {
    return retry == Count.NEVER ? Long.MAX_VALUE : retry;
  }
}
