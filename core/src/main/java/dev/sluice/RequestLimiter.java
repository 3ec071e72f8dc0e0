package dev.sluice;

import dev.sluice.spi.CounterStore;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
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
  private final Map<String, LogGate> shadowLogs = new ConcurrentHashMap<>();
  private volatile Compiled compiled;

  private RequestLimiter(Builder b) {
    this.clock = b.clock;
    this.evaluator = new Evaluator(b.store, b.clock);
    this.quotas = b.quotas;
    this.listener = b.listener;
    this.denyCacheSize = b.denyCacheSize;
    this.compiled = compile(b.rules, List.of());
  }

  public static Builder builder(CounterStore store) {
    return new Builder(store);
  }

  /**
   * Decides for one request, or returns null when no rule applies (no match, no identity, or the
   * kill switch is on). Never throws: a store failure, or an exception anywhere in the decision (a
   * key source or quota resolver that throws, a bug), is decided as the rules' {@code
   * onStoreFailure} says, logged at most every 10 s and told to the listener.
   */
  public Decision decide(RequestInfo request) {
    Compiled c = compiled;
    if (!c.rules.enabled() || c.active.length == 0) {
      return null;
    }
    return decide(request, c, c.active, null);
  }

  /**
   * Puts rules in force that only an adapter's binding applies, such as a JAX-RS resource method's
   * {@code @RateLimited}: they match no request by path and method themselves, and the binding's
   * {@link Binding#decide} applies them to the requests the adapter routed there. They share this
   * limiter's store, settings, kill switch and rule switches, and outlive {@link #update}.
   *
   * @throws IllegalArgumentException if a rule's id is already in force
   */
  public synchronized Binding bind(List<Rule> rules) {
    List<Rule> all = new ArrayList<>(compiled.bound);
    List<String> ids = new ArrayList<>();
    for (Rule r : rules) {
      if (compiled.rules.rule(r.id()).isPresent()
          || all.stream().anyMatch(b -> b.id().equals(r.id()))) {
        throw new IllegalArgumentException("duplicate rule id '" + r.id() + "'");
      }
      all.add(r);
      ids.add(r.id());
    }
    this.compiled = compile(compiled.rules, all);
    return new Binding(ids.toArray(new String[0]));
  }

  /** Rules bound to one place in an adapter; see {@link #bind}. Thread-safe. */
  public final class Binding {
    private final String[] ids;

    private Binding(String[] ids) {
      this.ids = ids;
    }

    /**
     * Decides for a request the adapter routed to this binding, or returns null when none of its
     * rules applies (disabled, no identity, or the kill switch is on). {@code pathParameters} feed
     * the rules' {@code path:NAME} keys. Never throws, as {@link RequestLimiter#decide}.
     */
    public Decision decide(RequestInfo request, Map<String, String> pathParameters) {
      Compiled c = compiled;
      if (!c.rules.enabled()) {
        return null;
      }
      Active[] active = new Active[ids.length];
      int n = 0;
      for (String id : ids) {
        Active a = c.boundActive.get(id);
        if (a != null) {
          active[n++] = a;
        }
      }
      return n == 0
          ? null
          : RequestLimiter.this.decide(request, c, Arrays.copyOf(active, n), pathParameters);
    }
  }

  /**
   * Decides by the given rules; matches method and path unless {@code bound} carries the path
   * parameters of an adapter's binding.
   */
  private Decision decide(
      RequestInfo request, Compiled c, Active[] candidates, Map<String, String> bound) {
    int n = candidates.length;
    Policy[] policies = new Policy[n];
    String[] identities = new String[n];
    int k = 0;
    Active current = null;
    long t0 = System.nanoTime();
    Decision d;
    try {
      String[] path =
          bound == null ? PathPattern.split(PathPattern.normalize(request.path())) : null;
      String method = bound == null ? upper(request.method()) : null;
      for (Active a : candidates) {
        current = a;
        Map<String, String> captures = bound;
        if (bound == null) {
          if (!a.rule.matchesMethod(method)) {
            continue;
          }
          captures = a.rule.pattern.match(path);
          if (captures == null) {
            continue;
          }
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
      current = null;
      if (k == 0) {
        return null;
      }
      t0 = System.nanoTime();
      d = evaluator.decide(policies, identities, k, 1);
    } catch (RuntimeException e) {
      if (current != null) {
        policies[k++] = current.policy;
      }
      if (k == 0) {
        // Failed before any rule was known to apply: nothing to decide on, so nothing is limited.
        evaluator.failed(new Policy[] {candidates[0].policy}, 1, e);
        notifyError(e);
        return null;
      }
      d = evaluator.failed(policies, k, e);
      notifyError(e);
    }
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

  private static String upper(String method) {
    return method == null ? "" : method.toUpperCase(Locale.ROOT);
  }

  private void notifyError(RuntimeException e) {
    try {
      listener.onError(e);
    } catch (RuntimeException ignored) {
      LOG.debug("decision listener failed", ignored);
    }
  }

  /** Whether any rule in force, bound ones included, keys on the client address ({@code ip}). */
  public boolean keysOnClientAddress() {
    Compiled c = compiled;
    for (Rule r : c.rules.rules()) {
      if (r.keySources.stream().anyMatch(k -> k.kind == KeySource.Kind.IP)) {
        return true;
      }
    }
    return c.bound.stream()
        .anyMatch(r -> r.keySources.stream().anyMatch(k -> k.kind == KeySource.Kind.IP));
  }

  /** The rules in force. */
  public RuleSet rules() {
    return compiled.rules;
  }

  /** The clock this limiter reads. */
  public InstantSource clock() {
    return clock;
  }

  /**
   * Puts {@code rules} in force at once; counters carry over for rules that keep their id. Bound
   * rules ({@link #bind}) stay in force.
   *
   * @throws IllegalArgumentException if a rule's id is that of a bound rule
   */
  public synchronized void update(RuleSet rules) {
    Objects.requireNonNull(rules, "rules");
    for (Rule r : compiled.bound) {
      if (rules.rule(r.id()).isPresent()) {
        throw new IllegalArgumentException(
            "rule id '" + r.id() + "' is already bound to an annotated method");
      }
    }
    this.compiled = compile(rules, compiled.bound);
    LOG.info("rate limit rules in force:\n{}", this);
  }

  /** The kill switch: false stops all limiting (and counting) until set back to true. */
  public void setEnabled(boolean enabled) {
    change(r -> r.toBuilder().enabled(enabled).build());
  }

  /** Turns one rule on or off. */
  public void setRuleEnabled(String id, boolean enabled) {
    replace(id, b -> b.enabled(enabled));
  }

  /** Puts one rule in or out of shadow mode (count and report, never reject). */
  public void setRuleShadow(String id, boolean shadow) {
    replace(id, b -> b.shadow(shadow));
  }

  private synchronized void change(UnaryOperator<RuleSet> f) {
    update(f.apply(compiled.rules));
  }

  private synchronized void replace(String id, UnaryOperator<Rule.Builder> f) {
    Compiled c = compiled;
    if (c.rules.rule(id).isPresent()) {
      RuleSet.Builder out = c.rules.toBuilder().clearRules();
      for (Rule r : c.rules.rules()) {
        out.rule(r.id().equals(id) ? f.apply(r.toBuilder()).build() : r);
      }
      update(out.build());
      return;
    }
    List<Rule> bound = new ArrayList<>(c.bound.size());
    boolean found = false;
    for (Rule r : c.bound) {
      found |= r.id().equals(id);
      bound.add(r.id().equals(id) ? f.apply(r.toBuilder()).build() : r);
    }
    if (!found) {
      throw new IllegalArgumentException("no rule with id '" + id + "'");
    }
    this.compiled = compile(c.rules, bound);
    LOG.info("rate limit rules in force:\n{}", this);
  }

  private Compiled compile(RuleSet rules, List<Rule> bound) {
    List<Active> active = new ArrayList<>();
    for (Rule r : rules.rules()) {
      if (r.enabled()) {
        active.add(new Active(r, policy(r)));
      }
    }
    Map<String, Active> boundActive = new HashMap<>();
    for (Rule r : bound) {
      if (r.enabled()) {
        boundActive.put(r.id(), new Active(r, policy(r)));
      }
    }
    return new Compiled(
        rules,
        active.toArray(new Active[0]),
        List.copyOf(bound),
        Map.copyOf(boundActive),
        new ClientAddress(rules.trusted, rules.forwardedHeader(), rules.ipv6Prefix()));
  }

  private Policy policy(Rule r) {
    return new Policy(
        r.id(),
        r.algorithm(),
        r.tiers(),
        r.failClosed(),
        r.shadow(),
        r.staggerWindows(),
        denyCacheSize);
  }

  private void logShadow(Decision d) {
    for (Quota q : d.quotas()) {
      if (q.shadow()
          && q.exceeded()
          && shadowLogs
              .computeIfAbsent(q.policy(), id -> new LogGate(SHADOW_LOG_INTERVAL_MILLIS))
              .tryAcquire(clock.millis())) {
        LOG.info(
            "shadow rule '{}' would have rejected a request (limit {} per {}); logged at most every {} s",
            q.policy(),
            q.limit(),
            Rule.format(q.tier().period()),
            SHADOW_LOG_INTERVAL_MILLIS / 1000);
      }
    }
  }

  private record Compiled(
      RuleSet rules,
      Active[] active,
      List<Rule> bound,
      Map<String, Active> boundActive,
      ClientAddress clients) {}

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

  /** The rules in force, one a line, bound ones included; what start-up and reloads log. */
  @Override
  public String toString() {
    Compiled c = compiled;
    StringBuilder sb = new StringBuilder(c.rules.toString());
    for (Rule r : c.bound) {
      sb.append(r).append(" (bound)\n");
    }
    return sb.toString();
  }
}
