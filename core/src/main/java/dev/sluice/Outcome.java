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
  private enum Scope {
    /** Every counter of the call. */
    ALL,
    /** The binding quota alone (the deny cache answered). */
    BINDING,
    /** None (the store failed, or nothing applied). */
    NONE
  }

  final Call call;
  private boolean applied;
  private boolean allowed = true;
  private String policy = "";
  private Tier tier;
  private long used;
  private long remaining;
  private long resetAfterMillis;
  private long retryAfterMillis;
  private boolean bindingShadow;
  private Algorithm algorithm;
  private boolean bindingExceeded;
  private StoreStatus storeStatus = StoreStatus.OK;
  private boolean shadowRejected;
  private boolean cached;
  private Scope scope = Scope.NONE;
  private boolean shed;
  private String priorityClass = "";

  /** The worker shedder whose count of requests in flight the request entered, or null. */
  LoadShedder inFlight;

  /** The slots this decision holds, once asked for ({@link Engine#slots}); null before. */
  Slots slots;

  /** When the request entered the count ({@link System#nanoTime}), for an adaptive limit. */
  long inFlightSince;

  /** The policies and tiers whose {@code RateLimit-Policy} value was last built, and that value. */
  private Policy[] lastPolicies;

  private int[] lastTiers;
  private String lastIetfPolicy;
  private long now;

  /** Quotas frozen by {@link #copy}; null while the call's counters report them. */
  private List<Quota> frozen;

  /** An empty outcome, ready for a limiter to write into. */
  public Outcome() {
    this.call = new Call();
    this.shedders = List.of();
  }

  private Outcome(Outcome o) {
    this.call = null;
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
    this.frozen = List.copyOf(o.quotas());
    this.shedders = o.call == null ? o.shedders : shedders(o.call);
  }

  /**
   * A copy's fleet shedders among its quotas (no client's quota, left out of the IETF fields); the
   * live outcome reads them from its call.
   */
  private final List<String> shedders;

  private static List<String> shedders(Call call) {
    List<String> ids = List.of();
    for (int e = 0; e < call.entries(); e++) {
      Policy p = call.entry(e).policy;
      if (p.shedding) {
        if (ids.isEmpty()) {
          ids = new ArrayList<>(2);
        }
        ids.add(p.id);
      }
    }
    return ids;
  }

  /** An immutable copy, quotas included. */
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

  /** Whether the request may proceed. */
  public boolean allowed() {
    return allowed;
  }

  /** The id of the binding policy. */
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

  /** Permits counted against the binding tier. */
  public long used() {
    return used;
  }

  /** Permits left in the binding tier, never negative. */
  public long remaining() {
    return remaining;
  }

  /** Milliseconds until the binding tier is back to zero if nothing else arrives. */
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

  /** Whether the binding policy only reports (never rejects). */
  public boolean bindingShadow() {
    return bindingShadow;
  }

  /** Whether the store answered, and if not, which way the decision fell. */
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

  /** Whether a shadow policy would have rejected this request (it was not rejected for it). */
  public boolean shadowRejected() {
    return shadowRejected;
  }

  /** Whether the local deny cache answered, with no store call. */
  public boolean fromDenyCache() {
    return cached;
  }

  /**
   * Every tier of every policy that applied, in order, as for {@link Decision#quotas}. Allocates a
   * new list on each call.
   */
  public List<Quota> quotas() {
    if (frozen != null) {
      return frozen;
    }
    switch (scope) {
      case ALL:
        List<Quota> all = new ArrayList<>(call.size());
        for (int i = 0; i < call.size(); i++) {
          all.add(quota(call.counter(i)));
        }
        return all;
      case BINDING:
        return List.of(binding());
      default:
        return List.of();
    }
  }

  /**
   * The IETF {@code RateLimit-Policy} field for the quotas that applied, shadow ones and the
   * fleet's load shedder left out, or empty when there are none. Each tier's item is built once per
   * policy, and the joined value is kept while the same policies apply, so a filter that reuses its
   * outcome builds it once.
   */
  public String ietfPolicy() {
    if (scope != Scope.ALL || call == null) {
      return ietfFromQuotas(true);
    }
    int n = call.size();
    boolean same = lastPolicies != null && lastPolicies.length == n;
    for (int i = 0; same && i < n; i++) {
      Call.Counter c = call.counter(i);
      same = lastPolicies[i] == c.entry.policy && lastTiers[i] == c.tier;
    }
    if (same) {
      return lastIetfPolicy;
    }
    Policy[] policies = new Policy[n];
    int[] tiers = new int[n];
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < n; i++) {
      Call.Counter c = call.counter(i);
      policies[i] = c.entry.policy;
      tiers[i] = c.tier;
      // A shadow policy limits nobody; the fleet's shedder is no client's quota.
      if (!c.entry.policy.shadow && !c.entry.policy.shedding) {
        if (sb.length() > 0) {
          sb.append(", ");
        }
        sb.append(c.entry.policy.ietfItem(c.tier));
      }
    }
    lastPolicies = policies;
    lastTiers = tiers;
    lastIetfPolicy = sb.toString();
    return lastIetfPolicy;
  }

  /**
   * The IETF {@code RateLimit} field: each non-shadow quota's remaining permits and seconds until
   * its count is back to zero; empty when there are none.
   */
  public String ietfState() {
    if (scope != Scope.ALL || call == null) {
      return ietfFromQuotas(false);
    }
    StringBuilder sb = new StringBuilder(64);
    for (int i = 0; i < call.size(); i++) {
      Call.Counter c = call.counter(i);
      Policy p = c.entry.policy;
      if (p.shadow || p.shedding) {
        continue;
      }
      if (sb.length() > 0) {
        sb.append(", ");
      }
      long u = Math.max(0, c.count.used());
      Policy.ietfState(
          sb,
          p.ietfName(c.tier),
          Math.max(0, c.tier().burst() - u),
          Math.max(0, c.count.resetAt() - now));
    }
    return sb.toString();
  }

  /** The IETF fields from {@link #quotas()}, for a frozen or binding-only outcome. */
  private String ietfFromQuotas(boolean policyField) {
    List<Quota> quotas = quotas();
    StringBuilder sb = new StringBuilder();
    for (Quota q : quotas) {
      if (q.shadow() || shedders.contains(q.policy())) {
        continue;
      }
      int sameRule = 0;
      for (Quota o : quotas) {
        if (o.policy().equals(q.policy())) {
          sameRule++;
        }
      }
      String name = Policy.ietfName(q.policy(), q.tier(), sameRule > 1);
      if (sb.length() > 0) {
        sb.append(", ");
      }
      if (policyField) {
        sb.append(Policy.ietfItem(name, q.tier()));
      } else {
        Policy.ietfState(sb, name, q.remaining(), q.resetAfter().toMillis());
      }
    }
    return sb.toString();
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

  /** An immutable {@link Decision}, or empty when no limit applied. */
  public Optional<Decision> toDecision() {
    return applied ? Optional.of(new Decision(copy())) : Optional.empty();
  }

  // Written by the engine.

  /** Nothing applied: allowed, and nothing to report. */
  void none() {
    applied = false;
    allowed = true;
    policy = "";
    tier = null;
    used = 0;
    remaining = 0;
    resetAfterMillis = 0;
    retryAfterMillis = 0;
    bindingShadow = false;
    bindingExceeded = false;
    storeStatus = StoreStatus.OK;
    shadowRejected = false;
    cached = false;
    scope = Scope.NONE;
    shed = false;
    priorityClass = "";
  }

  /** A decision from the call's counters, {@code binding} the one that decided. */
  void counted(
      long now, boolean allowed, Call.Counter binding, long retryAfter, boolean shadowRejected) {
    this.now = now;
    this.applied = true;
    this.allowed = allowed;
    bind(binding);
    this.retryAfterMillis = retryAfter;
    this.shadowRejected = shadowRejected;
    this.cached = false;
  }

  /** Takes the binding tier's figures from {@code c}. */
  private void bind(Call.Counter c) {
    Policy p = c.entry.policy;
    Tier t = c.tier();
    names(p, t, Scope.ALL);
    this.used = Math.max(0, c.count.used());
    this.remaining = Math.max(0, t.burst() - used);
    this.resetAfterMillis = Math.max(0, c.count.resetAt() - now);
    this.bindingShadow = p.shadow;
    this.bindingExceeded = !c.count.passed();
    this.shed = p.shedding;
  }

  /**
   * Sets the binding policy and tier, what the outcome reports, a store that answered and no
   * priority class. An outcome reused for the same policy holds the same references already, and
   * keeps them: a reference store costs a garbage collector's write barrier, a comparison does not.
   */
  @SuppressWarnings("ReferenceEquality") // the same object, not an equal one
  private void names(Policy p, Tier t, Scope scope) {
    if (policy != p.id) {
      this.policy = p.id;
    }
    if (tier != t) {
      this.tier = t;
    }
    if (algorithm != p.algorithm) {
      this.algorithm = p.algorithm;
    }
    if (this.scope != scope) {
      this.scope = scope;
    }
    if (storeStatus != StoreStatus.OK) {
      this.storeStatus = StoreStatus.OK;
    }
    if (!priorityClass.isEmpty()) {
      this.priorityClass = "";
    }
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

  /** A rejection with the binding quota alone: the deny cache answered, or it can never pass. */
  void rejected(
      Policy p,
      Tier tier,
      long used,
      long resetAfterMillis,
      long retryAfterMillis,
      boolean cached) {
    this.applied = true;
    this.allowed = false;
    names(p, tier, Scope.BINDING);
    this.used = used;
    this.remaining = Math.max(0, tier.burst() - used);
    this.resetAfterMillis = Math.max(0, resetAfterMillis);
    this.retryAfterMillis = retryAfterMillis;
    this.bindingShadow = false;
    this.bindingExceeded = true;
    this.shadowRejected = false;
    this.cached = cached;
    this.shed = p.shedding;
  }

  /** The store (or the limiter) failed: decided without counts by {@code binding}'s setting. */
  void withoutCounts(Policy binding) {
    boolean closed = binding.failClosed && !binding.shadow;
    Tier t = binding.tiers[0];
    this.applied = true;
    this.allowed = !closed;
    this.policy = binding.id;
    this.algorithm = binding.algorithm;
    this.tier = t;
    this.used = 0;
    this.remaining = t.burst();
    this.resetAfterMillis = t.periodMillis();
    this.retryAfterMillis = closed ? Evaluator.FAIL_CLOSED_RETRY_MILLIS : 0;
    this.bindingShadow = binding.shadow;
    this.bindingExceeded = closed;
    this.storeStatus = closed ? StoreStatus.FAILED_CLOSED : StoreStatus.FAILED_OPEN;
    this.shadowRejected = false;
    this.cached = false;
    this.scope = Scope.NONE;
    this.shed = false;
    this.priorityClass = "";
  }

  /** Decided by this instance's local counters because the store failed. */
  void decidedLocally() {
    this.storeStatus = StoreStatus.LOCAL;
  }

  /** The request's priority class, once decided. */
  void priorityClass(String name) {
    this.priorityClass = name;
  }

  /**
   * Refused by this instance's worker-utilization shedder: a 503, with no quota to report ({@code
   * tier} only names the shedder's capacity).
   */
  void shedByWorkers(Tier tier, long retryAfterMillis) {
    this.applied = true;
    this.allowed = false;
    this.policy = LoadShedder.WORKERS;
    this.algorithm = Algorithm.CONCURRENCY;
    this.tier = tier;
    this.used = tier.limit();
    this.remaining = 0;
    this.resetAfterMillis = retryAfterMillis;
    this.retryAfterMillis = retryAfterMillis;
    this.bindingShadow = false;
    this.bindingExceeded = true;
    this.storeStatus = StoreStatus.OK;
    this.shadowRejected = false;
    this.cached = false;
    this.scope = Scope.NONE;
    this.shed = true;
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
