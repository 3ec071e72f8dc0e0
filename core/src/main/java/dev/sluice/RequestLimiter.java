package dev.sluice;

import dev.sluice.spi.CounterStore;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Limits HTTP requests by a {@link RuleSet}: every rule whose match fits the request and whose key
 * identifies it applies, all in one batched store call, and all must pass. A request rejected by
 * one rule gives back what it took from the others.
 *
 * <p>The rules change at runtime without a restart: {@link #update} swaps them atomically, and
 * {@link #setEnabled}, {@link #setRuleEnabled} and {@link #setRuleShadow} are shortcuts for the
 * kill switch and per-rule switches. Thread-safe.
 */
public final class RequestLimiter {

  private static final Logger LOG = LoggerFactory.getLogger(RequestLimiter.class);
  private static final long SHADOW_LOG_INTERVAL_MILLIS = 10_000;

  private final Evaluator evaluator;
  private final InstantSource clock;
  private final QuotaResolver quotas;
  private final DecisionListener listener;
  private final int denyCacheSize;
  private final Map<String, Throttle> shadowLogs = new ConcurrentHashMap<>();
  private volatile Compiled compiled;

  private RequestLimiter(Builder b) {
    this.clock = b.clock;
    this.evaluator = new Evaluator(b.store, b.clock);
    this.quotas = b.quotas;
    this.listener = b.listener;
    this.denyCacheSize = b.denyCacheSize;
    this.compiled = compile(b.rules);
  }

  public static Builder builder(CounterStore store) {
    return new Builder(store);
  }

  /**
   * Decides for one request, or returns null when no rule applies (no match, no identity, or the
   * kill switch is on). Never throws for a store failure.
   */
  public Decision decide(RequestInfo request) {
    Compiled c = compiled;
    if (!c.rules.enabled() || c.active.length == 0) {
      return null;
    }
    String path = PathPattern.normalize(request.path());
    String method = request.method() == null ? "" : request.method().toUpperCase(Locale.ROOT);
    int n = c.active.length;
    Policy[] policies = new Policy[n];
    String[] identities = new String[n];
    int k = 0;
    for (Active a : c.active) {
      if (!a.rule.matchesMethod(method)) {
        continue;
      }
      Map<String, String> captures = a.rule.pattern.match(path);
      if (captures == null) {
        continue;
      }
      String identity = null;
      for (KeySource s : a.rule.keySources) {
        String v = s.resolve(request, captures, c.clients);
        if (v != null) {
          identity = s.tag() + '=' + v;
          break;
        }
      }
      if (identity == null) {
        continue;
      }
      policies[k] = a.policyFor(quotas.quota(request, a.rule));
      identities[k] = identity;
      k++;
    }
    if (k == 0) {
      return null;
    }
    long t0 = System.nanoTime();
    Decision d = evaluator.decide(policies, identities, k, 1);
    long storeNanos = d.fromDenyCache() ? -1 : System.nanoTime() - t0;
    if (d.shadowRejected()) {
      logShadow(d);
    }
    if (listener != DecisionListener.NONE) {
      List<String> ids = new ArrayList<>(k);
      for (int i = 0; i < k; i++) {
        ids.add(policies[i].id);
      }
      try {
        listener.onDecision(ids, d, storeNanos);
      } catch (RuntimeException e) {
        LOG.debug("decision listener failed", e);
      }
    }
    return d;
  }

  /** The rules in force. */
  public RuleSet rules() {
    return compiled.rules;
  }

  /** The clock this limiter reads. */
  public InstantSource clock() {
    return clock;
  }

  /** Puts {@code rules} in force at once; counters carry over for rules that keep their id. */
  public synchronized void update(RuleSet rules) {
    this.compiled = compile(Objects.requireNonNull(rules, "rules"));
    LOG.info("rate limit rules in force:\n{}", rules);
  }

  /** The kill switch: false stops all limiting (and counting) until set back to true. */
  public void setEnabled(boolean enabled) {
    change(r -> r.toBuilder().enabled(enabled).build());
  }

  /** Turns one rule on or off. */
  public void setRuleEnabled(String id, boolean enabled) {
    change(r -> replace(r, id, b -> b.enabled(enabled)));
  }

  /** Puts one rule in or out of shadow mode (count and report, never reject). */
  public void setRuleShadow(String id, boolean shadow) {
    change(r -> replace(r, id, b -> b.shadow(shadow)));
  }

  private synchronized void change(UnaryOperator<RuleSet> f) {
    update(f.apply(compiled.rules));
  }

  private static RuleSet replace(RuleSet rules, String id, UnaryOperator<Rule.Builder> f) {
    if (rules.rule(id) == null) {
      throw new IllegalArgumentException("no rule with id '" + id + "'");
    }
    RuleSet.Builder out = RuleSet.builder().trustedProxies(rules.trustedProxies())
        .headers(rules.headers()).resetFormat(rules.resetFormat()).enabled(rules.enabled());
    for (Rule r : rules.rules()) {
      out.rule(r.id().equals(id) ? f.apply(r.toBuilder()).build() : r);
    }
    return out.build();
  }

  private Compiled compile(RuleSet rules) {
    List<Active> active = new ArrayList<>();
    for (Rule r : rules.rules()) {
      if (r.enabled()) {
        active.add(new Active(r, new Policy(r.id(), r.algorithm(), r.tiers(), r.failClosed(), r.shadow(),
            r.staggerWindows(), denyCacheSize)));
      }
    }
    return new Compiled(rules, active.toArray(new Active[0]), new ClientAddress(rules.trusted));
  }

  private void logShadow(Decision d) {
    for (Quota q : d.quotas()) {
      if (q.shadow() && q.exceeded()
          && shadowLogs.computeIfAbsent(q.policy(), id -> new Throttle(SHADOW_LOG_INTERVAL_MILLIS)).tryAcquire(clock.millis())) {
        LOG.info("shadow rule '{}' would have rejected a request (limit {} per {}); logged at most every {} s",
            q.policy(), q.limit(), Rule.format(q.tier().period()), SHADOW_LOG_INTERVAL_MILLIS / 1000);
      }
    }
  }

  private record Compiled(RuleSet rules, Active[] active, ClientAddress clients) {}

  /** An enabled rule with its policy, and its policies for overridden quotas. */
  private static final class Active {
    private static final int MAX_OVERRIDES = 1_024;
    final Rule rule;
    final Policy policy;
    final Map<Long, Policy> overrides = new ConcurrentHashMap<>();

    Active(Rule rule, Policy policy) {
      this.rule = rule;
      this.policy = policy;
    }

    Policy policyFor(Long quota) {
      if (quota == null || quota == rule.tiers().get(0).limit()) {
        return policy;
      }
      Policy p = overrides.get(quota);
      if (p == null) {
        p = policy.withFirstLimit(quota);
        if (overrides.size() < MAX_OVERRIDES) {
          overrides.put(quota, p);
        }
      }
      return p;
    }
  }

  /** Configures a {@link RequestLimiter}. */
  public static final class Builder {
    private final CounterStore store;
    private RuleSet rules = RuleSet.builder().build();
    private InstantSource clock = InstantSource.system();
    private QuotaResolver quotas = QuotaResolver.NONE;
    private DecisionListener listener = DecisionListener.NONE;
    private int denyCacheSize = RateLimiter.Builder.DEFAULT_DENY_CACHE_SIZE;

    private Builder(CounterStore store) {
      this.store = Objects.requireNonNull(store, "store");
    }

    public Builder rules(RuleSet rules) {
      this.rules = Objects.requireNonNull(rules, "rules");
      return this;
    }

    public Builder clock(InstantSource clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /** Per-identity limits; none by default. */
    public Builder quotaResolver(QuotaResolver quotas) {
      this.quotas = Objects.requireNonNull(quotas, "quotaResolver");
      return this;
    }

    public Builder listener(DecisionListener listener) {
      this.listener = Objects.requireNonNull(listener, "listener");
      return this;
    }

    /** Deny cache entries per rule; 0 turns it off. */
    public Builder denyCacheSize(int size) {
      if (size < 0) {
        throw new IllegalArgumentException("denyCacheSize must be >= 0");
      }
      this.denyCacheSize = size;
      return this;
    }

    public RequestLimiter build() {
      return new RequestLimiter(this);
    }
  }

  @Override
  public String toString() {
    return "RequestLimiter" + Arrays.toString(compiled.active);
  }
}
