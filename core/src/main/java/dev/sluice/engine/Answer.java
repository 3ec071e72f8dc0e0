package dev.sluice.engine;

import dev.sluice.Algorithm;
import dev.sluice.Quota;
import dev.sluice.Slots;
import dev.sluice.StoreStatus;
import dev.sluice.Tier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The engine's answer to one request, which {@link dev.sluice.Outcome} and {@link
 * dev.sluice.Decision} read: written by {@link Verdicts}, with the call whose counters the quotas
 * are read from. Its getters are the outcome's, which documents them. Not thread-safe: one decision
 * at a time, and each decision overwrites the last.
 */
public final class Answer {

  /** Which quotas the outcome reports. */
  enum Scope {
    /** Every counter of the call. */
    ALL,
    /** The binding quota alone (a request too large to ever pass). */
    BINDING,
    /** None (the store failed, or nothing applied). */
    NONE
  }

  // Written by the engine (Verdicts), read through the methods below.

  /** The engine's working state for the decision, which the quotas are read from. */
  final Call call;

  boolean applied;
  boolean allowed = true;
  String policy = "";
  Tier tier;
  long used;
  long remaining;
  long resetAfterMillis;
  long retryAfterMillis;
  boolean bindingShadow;
  Algorithm algorithm;
  boolean bindingExceeded;
  StoreStatus storeStatus = StoreStatus.OK;
  boolean shadowRejected;
  boolean cached;
  Scope scope = Scope.NONE;
  boolean shed;
  String priorityClass = "";

  /** The decision's instant, which the quotas' reset times are counted from. */
  long now;

  /** The slots this decision holds, once asked for ({@link Engine#slots}); null before. */
  Slots slots;

  /**
   * What counts the request out of a worker shedder's requests in flight, once it is released; null
   * when it entered none.
   */
  Runnable inFlight;

  /**
   * The IETF fields of the call's counters, kept while the same policies apply; made on first use.
   */
  private IetfFields ietf;

  /** An empty answer, ready for the engine to write into. */
  public Answer() {
    this.call = new Call();
  }

  /** A copy of {@code o}, with a copy of its call's counters. */
  private Answer(Answer o) {
    this.call = o.call.copy(o.scope == Scope.ALL);
    this.applied = o.applied;
    this.allowed = o.allowed;
    this.policy = o.policy;
    this.tier = o.tier;
    this.used = o.used;
    this.remaining = o.remaining;
    this.resetAfterMillis = o.resetAfterMillis;
    this.retryAfterMillis = o.retryAfterMillis;
    this.bindingShadow = o.bindingShadow;
    this.algorithm = o.algorithm;
    this.bindingExceeded = o.bindingExceeded;
    this.storeStatus = o.storeStatus;
    this.shadowRejected = o.shadowRejected;
    this.cached = o.cached;
    this.scope = o.scope;
    this.shed = o.shed;
    this.priorityClass = o.priorityClass;
    this.now = o.now;
  }

  /** Readies this answer for a new decision, which holds no slots yet. */
  void clear() {
    call.clear();
    if (slots != null) {
      slots = null;
    }
    if (inFlight != null) {
      inFlight = null;
    }
  }

  /** A copy that a later decision into this outcome leaves unchanged. */
  public Answer copy() {
    return new Answer(this);
  }

  public boolean applied() {
    return applied;
  }

  public boolean allowed() {
    return allowed;
  }

  public String policy() {
    return policy;
  }

  public Tier tier() {
    if (!applied) {
      throw new IllegalStateException("no limit applied");
    }
    return tier;
  }

  public Algorithm algorithm() {
    if (!applied) {
      throw new IllegalStateException("no limit applied");
    }
    return algorithm;
  }

  public long limit() {
    return applied ? tier.burst() : 0;
  }

  public long used() {
    return used;
  }

  public long remaining() {
    return remaining;
  }

  public long resetAfterMillis() {
    return resetAfterMillis;
  }

  public long retryAfterMillis() {
    return retryAfterMillis;
  }

  public boolean shed() {
    return shed;
  }

  public String priorityClass() {
    return priorityClass;
  }

  public boolean bindingShadow() {
    return bindingShadow;
  }

  public StoreStatus storeStatus() {
    return storeStatus;
  }

  public boolean storeFailed() {
    return storeStatus != StoreStatus.OK;
  }

  public boolean shadowRejected() {
    return shadowRejected;
  }

  public boolean fromDenyCache() {
    return cached;
  }

  public List<Quota> quotas() {
    switch (scope) {
      case ALL -> {
        List<Quota> all = new ArrayList<>(call.size());
        for (int i = 0; i < call.size(); i++) {
          all.add(quota(call.counter(i)));
        }
        return all;
      }
      case BINDING -> {
        return List.of(binding());
      }
      default -> {
        return List.of();
      }
    }
  }

  public String ietfPolicy() {
    return scope == Scope.ALL ? ietf().policy(call) : ietfFromQuotas(true);
  }

  public String ietfState() {
    return scope == Scope.ALL ? IetfFields.state(call, now) : ietfFromQuotas(false);
  }

  private String ietfFromQuotas(boolean policyField) {
    return IetfFields.fromQuotas(quotas(), call.shedders(), algorithm, policyField);
  }

  public Quota binding() {
    return new Quota(
        policy,
        tier,
        used,
        remaining,
        Duration.ofMillis(resetAfterMillis),
        bindingShadow,
        bindingExceeded);
  }

  private IetfFields ietf() {
    if (ietf == null) {
      ietf = new IetfFields();
    }
    return ietf;
  }

  private Quota quota(Counter c) {
    Policy p = c.entry.policy;
    Tier t = c.tier();
    long u = Math.max(0, c.count.used());
    return new Quota(
        p.id,
        t,
        u,
        Math.max(0, t.burst() - u),
        Duration.ofMillis(Math.max(0, c.count.resetAt() - now)),
        p.shadow,
        !c.count.passed());
  }

  @Override
  public String toString() {
    if (!applied) {
      return "allowed{no limit applied}";
    }
    return (allowed ? "allowed" : "rejected")
        + "{policy="
        + policy
        + ", limit="
        + limit()
        + ", used="
        + used
        + ", remaining="
        + remaining
        + ", resetAfter="
        + Duration.ofMillis(resetAfterMillis)
        + ", retryAfter="
        + Duration.ofMillis(retryAfterMillis)
        + ", store="
        + storeStatus
        + (shadowRejected ? ", shadowRejected" : "")
        + (cached ? ", cached" : "")
        + "}";
  }
}
