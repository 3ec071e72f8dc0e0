package dev.sluice;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The answer to one request, written into an object the caller owns and reuses: the allocation-free
 * form of {@link Decision}. A decision into a reused outcome allocates nothing on the allow path.
 *
 * <pre>{@code
 * Outcome out = new Outcome();           // one per thread, reused
 * if (!limiter.tryAcquire(key, 1, out)) {
 *   reject(out.retryAfterMillis());
 * }
 * }</pre>
 *
 * <p>The <em>binding</em> quota is the one that decided, as for {@link Decision}. Not thread-safe:
 * one thread at a time, and each decision overwrites the last. {@link #toDecision} takes an
 * immutable copy.
 */
public final class Outcome {

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

  /** An empty outcome, ready for a limiter to write into. */
  public Outcome() {
    this.call = new Call();
  }

  /** A copy of {@code o}, with a copy of its call's counters. */
  private Outcome(Outcome o) {
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

  /** A copy that a later decision into this outcome leaves unchanged. */
  Outcome copy() {
    return new Outcome(this);
  }

  /**
   * Whether any limit applied. False when a request limiter found no rule for the request (no
   * match, no identity, or the kill switch is on); the request is then allowed and nothing else is
   * set.
   */
  public boolean applied() {
    return applied;
  }

  /** {@return whether the request may proceed} */
  public boolean allowed() {
    return allowed;
  }

  /** {@return the id of the binding policy} */
  public String policy() {
    return policy;
  }

  /**
   * The binding tier.
   *
   * @throws IllegalStateException if no limit applied
   */
  public Tier tier() {
    if (!applied) {
      throw new IllegalStateException("no limit applied");
    }
    return tier;
  }

  /**
   * The binding policy's algorithm: {@link Algorithm#CONCURRENCY} when the limit is on requests in
   * flight rather than on a rate.
   *
   * @throws IllegalStateException if no limit applied
   */
  public Algorithm algorithm() {
    if (!applied) {
      throw new IllegalStateException("no limit applied");
    }
    return algorithm;
  }

  /**
   * The binding tier's capacity ({@link Tier#burst}): its limit, or a token bucket's size; 0 when
   * no limit applied.
   */
  public long limit() {
    return applied ? tier.burst() : 0;
  }

  /** {@return permits counted against the binding tier} */
  public long used() {
    return used;
  }

  /** {@return permits left in the binding tier, never negative} */
  public long remaining() {
    return remaining;
  }

  /**
   * Milliseconds until the binding tier is back to zero if nothing else arrives. For a concurrency
   * limit, the latest a slot never given back drops out of the count: slots in flight free when
   * their requests complete, which no clock predicts, so the headers never show it.
   */
  public long resetAfterMillis() {
    return resetAfterMillis;
  }

  /** Milliseconds the client should wait; 0 when allowed (see {@link Decision#retryAfter}). */
  public long retryAfterMillis() {
    return retryAfterMillis;
  }

  /**
   * Whether a load shedder decided: refused, the request gets a 503 ({@code
   * temporary-reduced-capacity}), not a 429, and the outcome says nothing of a client's quota.
   */
  public boolean shed() {
    return shed;
  }

  /**
   * The request's priority class for load shedding ({@code critical}, {@code test}…), or empty when
   * the limiter sheds no load.
   */
  public String priorityClass() {
    return priorityClass;
  }

  /** {@return whether the binding policy only reports (never rejects)} */
  public boolean bindingShadow() {
    return bindingShadow;
  }

  /** {@return whether the store answered, and if not, which way the decision fell} */
  public StoreStatus storeStatus() {
    return storeStatus;
  }

  /**
   * Whether the store failed or timed out for this decision (also when local counters decided it,
   * {@link StoreStatus#LOCAL}).
   */
  public boolean storeFailed() {
    return storeStatus != StoreStatus.OK;
  }

  /**
   * {@return whether a shadow policy would have rejected this request (it was not rejected for it)}
   */
  public boolean shadowRejected() {
    return shadowRejected;
  }

  /** {@return whether the local deny cache answered, with no store call} */
  public boolean fromDenyCache() {
    return cached;
  }

  /**
   * Every tier of every policy that applied, in order, as for {@link Decision#quotas}: the same
   * tiers whether the store or the deny cache answered. Allocates a new list on each call.
   */
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

  /**
   * The IETF {@code RateLimit-Policy} field for the quotas that applied, shadow ones, the fleet's
   * load shedder and concurrency limits (requests in flight, no quota per window) left out, or
   * empty when there are none. Kept while the same policies apply, so a filter that reuses its
   * outcome builds it once.
   */
  public String ietfPolicy() {
    return scope == Scope.ALL ? call.ietf().policy(call) : ietfFromQuotas(true);
  }

  /**
   * The IETF {@code RateLimit} field: each quota of {@link #ietfPolicy}, its remaining permits and
   * seconds until its count is back to zero; empty when there are none.
   */
  public String ietfState() {
    return scope == Scope.ALL ? IetfFields.state(call, now) : ietfFromQuotas(false);
  }

  private String ietfFromQuotas(boolean policyField) {
    return IetfFields.fromQuotas(quotas(), call.shedders(), algorithm, policyField);
  }

  /** The binding quota; see {@link Decision#binding}. */
  Quota binding() {
    return new Quota(
        policy,
        tier,
        used,
        remaining,
        Duration.ofMillis(resetAfterMillis),
        bindingShadow,
        bindingExceeded);
  }

  /** {@return an immutable {@link Decision}, or empty when no limit applied} */
  public Optional<Decision> toDecision() {
    return applied ? Optional.of(new Decision(copy())) : Optional.empty();
  }

  private Quota quota(Call.Counter c) {
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
