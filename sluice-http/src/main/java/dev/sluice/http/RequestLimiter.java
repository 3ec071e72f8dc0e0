package dev.sluice.http;

import dev.sluice.Decision;
import dev.sluice.LimiterBuilder;
import dev.sluice.Outcome;
import dev.sluice.Slots;
import dev.sluice.control.KnobRefresh;
import dev.sluice.control.KnobWatcher;
import dev.sluice.control.Knobs;
import dev.sluice.engine.Engine;
import dev.sluice.shedding.LoadShedder;
import dev.sluice.spi.CounterStore;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Limits HTTP requests by a {@link RuleSet}: every rule whose match fits the request and whose key
 * identifies it applies, all in one batched store call, and all must pass. A request rejected by
 * one rule gives back what it took from the others. It is the HTTP face of the {@link Engine} that
 * {@link dev.sluice.RateLimiter} also uses.
 *
 * <p>The rules change at runtime without a restart: {@link #update} swaps them atomically, and
 * {@link #setEnabled}, {@link #setRuleEnabled} and {@link #setRuleShadow} are shortcuts for the
 * kill switch and per-rule switches. Thread-safe.
 */
public final class RequestLimiter {

  private static final Logger LOG = LoggerFactory.getLogger(RequestLimiter.class);

  private final Engine engine;
  private final InstantSource clock;
  private final RequestMatcher matcher;
  private final RuleChanges changes;
  private volatile CompiledRules compiled;
  private final Optional<KnobWatcher> watcher;
  private final Set<String> keyResolvers;

  private RequestLimiter(Builder b) {
    this.engine = Engine.of(b);
    this.clock = engine.clock();
    Map<String, KeyResolver> apps = Map.copyOf(b.apps);
    this.keyResolvers = Set.copyOf(apps.keySet());
    this.matcher = new RequestMatcher(engine, b.quotas, apps);
    this.changes = new RuleChanges(new RuleCompiler(engine, apps));
    this.compiled = changes.first(b.rules);
    this.watcher = b.watch(this::applyKnobs);
  }

  public static Builder builder(CounterStore store) {
    return new Builder(store);
  }

  /**
   * Decides for one request; empty when no rule applies (no match, no identity, or the kill switch
   * is on). Never throws: see {@link #decide(RequestInfo, Outcome)}.
   */
  public Optional<Decision> decide(RequestInfo request) {
    Outcome out = new Outcome();
    decide(request, out);
    return out.toDecision();
  }

  /**
   * Decides for one request into {@code out}, which the caller reuses; {@code out.applied()} is
   * false when no rule applies. Never throws: a store failure is decided as the rules' {@code
   * onStoreFailure} says. A key source or quota resolver that throws leaves its rule out while the
   * other rules and the load shedders count as usual; it refuses the request (503) when its rule
   * has {@code reject}, and, when nothing else applies, lets it through as failed open under its
   * rule. Any other exception in the decision (a bug) lets the request through, or refuses it for a
   * rule with {@code reject}. Each is logged at most every 10 s and told to the listener.
   *
   * @return whether the request may proceed
   */
  public boolean decide(RequestInfo request, Outcome out) {
    CompiledRules c = compiled;
    engine.begin(out);
    if (!c.enabled() || (c.active().length == 0 && c.shed() == null)) {
      return engine.decide(out, 1);
    }
    return matcher.decide(request, c, c.active(), null, out);
  }

  /**
   * {@link #decide(RequestInfo, Outcome)} without waiting on the store, for an adapter whose thread
   * must not block (an event loop): the rules are matched in the calling thread, the store's counts
   * come through {@link CounterStore#incrementAsync(dev.sluice.spi.CounterBatch)}, and the same
   * algorithms, deny caches, refunds and failure settings decide. The future completes, never
   * exceptionally, once {@code out} holds the answer: at once when no store call is needed or the
   * store answers from memory, else in the thread the store answered on. {@code out} is the
   * request's own: nobody else touches it until then.
   *
   * @return whether the request may proceed
   */
  public java.util.concurrent.CompletionStage<Boolean> decideAsync(
      RequestInfo request, Outcome out) {
    CompiledRules c = compiled;
    engine.begin(out);
    if (!c.enabled() || (c.active().length == 0 && c.shed() == null)) {
      return engine.decideAsync(out, 1);
    }
    return matcher.decideAsync(request, c, c.active(), null, out);
  }

  /**
   * Puts rules in force that only an adapter applies, such as a JAX-RS resource method's
   * {@code @RateLimited}: they match no request by path and method themselves, and the returned
   * {@link BoundRules#decide} applies them to the requests the adapter routed there. They share
   * this limiter's store, settings, kill switch and rule switches, and outlive {@link #update}.
   *
   * @throws IllegalArgumentException if a rule's id is already in force
   */
  public synchronized BoundRules bind(List<Rule> rules) {
    List<String> ids = new ArrayList<>();
    this.compiled = changes.bind(compiled, rules, ids);
    return new BoundRules(ids.toArray(new String[0]));
  }

  /** Rules bound to one place in an adapter; see {@link #bind}. Thread-safe. */
  public final class BoundRules {
    private final String[] ids;

    /** The enabled rules of {@link #ids} in the rule set they were resolved from. */
    private volatile Resolved resolved;

    @SuppressWarnings("ArrayRecordComponent") // a carrier read by index, never compared
    private record Resolved(CompiledRules from, ActiveRule[] active) {}

    private BoundRules(String[] ids) {
      this.ids = ids;
    }

    /** The enabled ones of these rules in {@code c}, resolved once per rule set. */
    @SuppressWarnings("ReferenceEquality") // the same compiled rules, not equal ones
    private ActiveRule[] active(CompiledRules c) {
      Resolved r = resolved;
      if (r == null || r.from != c) {
        List<ActiveRule> active = new ArrayList<>(ids.length);
        for (String id : ids) {
          ActiveRule a = c.boundActive().get(id);
          if (a != null) {
            active.add(a);
          }
        }
        r = new Resolved(c, active.toArray(new ActiveRule[0]));
        resolved = r;
      }
      return r.active;
    }

    /**
     * Decides for a request the adapter routed to these rules; empty when none of its rules applies
     * (disabled, no identity, or the kill switch is on). {@code pathParameters} feed the rules'
     * {@code path:NAME} keys. Never throws, as {@link RequestLimiter#decide}.
     */
    public Optional<Decision> decide(RequestInfo request, Map<String, String> pathParameters) {
      Outcome out = new Outcome();
      decide(request, pathParameters, out);
      return out.toDecision();
    }

    /** {@link #decide(RequestInfo, Map)} into an outcome the caller reuses. */
    public boolean decide(RequestInfo request, Map<String, String> pathParameters, Outcome out) {
      CompiledRules c = compiled;
      engine.begin(out);
      if (!c.enabled()) {
        return engine.decide(out, 1);
      }
      ActiveRule[] active = active(c);
      return matcher.decide(
          request, c, active, Objects.requireNonNull(pathParameters, "pathParameters"), out);
    }

    /**
     * Decides for a request the adapter routed to these rules by them and by the rules in force
     * whose method and path match {@code request}, in one decision: a request any of them refuses
     * takes nothing from the others, and holds no slot. For an adapter that would otherwise decide
     * twice (a JAX-RS resource's {@code @RateLimited} after the rules file). Never throws, as
     * {@link RequestLimiter#decide}.
     */
    public boolean decideWithRules(
        RequestInfo request, Map<String, String> pathParameters, Outcome out) {
      CompiledRules c = compiled;
      engine.begin(out);
      if (!c.enabled()) {
        return engine.decide(out, 1);
      }
      ActiveRule[] active = active(c);
      return matcher.decideWithRules(
          request, c, active, Objects.requireNonNull(pathParameters, "pathParameters"), out);
    }
  }

  /**
   * {@return whether rules are bound to places in an adapter ({@link #bind}): an adapter that
   * decides them after the rules in force decides both at once ({@link
   * BoundRules#decideWithRules})}
   */
  public boolean hasBoundRules() {
    return !compiled.bound().isEmpty();
  }

  /**
   * {@return whether any rule in force, bound ones included, keys on the client address ({@code
   * ip})}
   */
  public boolean keysOnClientAddress() {
    return RuleChanges.keysOnClientAddress(compiled);
  }

  /** {@return the rules in force} */
  public RuleSet rules() {
    return compiled.rules();
  }

  /**
   * {@return the names of the key resolvers registered: the {@code app:NAME} sources a rule may key
   * on}
   */
  public Set<String> keyResolvers() {
    return keyResolvers;
  }

  /** {@return the clock this limiter reads} */
  public InstantSource clock() {
    return clock;
  }

  /**
   * Puts {@code rules} in force at once; counters carry over for rules that keep their id. Bound
   * rules ({@link #bind}) stay in force, and so do the switches set at runtime ({@link
   * #setEnabled}, {@link #setRuleEnabled}, {@link #setRuleShadow}) over settings {@code rules}
   * leaves as they were.
   *
   * @throws IllegalArgumentException if a rule's id is that of a bound rule
   */
  public synchronized void update(RuleSet rules) {
    this.compiled = changes.update(compiled, rules);
    LOG.info("rate limit rules in force:\n{}", this);
  }

  /**
   * The concurrency slots the allowed decision in {@code out} holds ({@code concurrency:} rules),
   * to {@link Slots#release} when the response is complete, however it completes. Call it before
   * {@code out} is reused; {@link Slots#NONE} when it holds none.
   */
  public Slots slots(Outcome out) {
    return engine.slots(out);
  }

  /**
   * Whether a decision under the rules in force, bound ones included, may hold {@link Slots}: a
   * {@code concurrency:} rule or load shedding is enabled. An adapter that has to follow each
   * request to its end to release them need not follow any while this is false.
   */
  public boolean mayHoldSlots() {
    return compiled.holdsSlots();
  }

  /** {@return the worker shedder in force, when the rules shed load by worker utilization} */
  public Optional<LoadShedder> loadShedder() {
    SheddingPlan s = compiled.shed();
    return s == null || !s.shedder.sheddingWorkers() ? Optional.empty() : Optional.of(s.shedder);
  }

  /**
   * Puts the fleet's {@link Knobs} over the rules: {@code global enabled}, and each rule's {@code
   * enabled}, {@code shadow} and {@code limit}. They stay over the rules through {@link #update}
   * until knobs without them come. A limiter built with {@link Builder#knobs} is told by its
   * watcher; others can be told by hand.
   */
  @SuppressWarnings("ReferenceEquality") // the same compiled rules: the knobs were in force
  public synchronized void applyKnobs(Knobs knobs) {
    CompiledRules c = compiled;
    this.compiled = changes.knobs(c, knobs);
    if (compiled != c) {
      LOG.info("rate limit rules in force, with knobs:\n{}", this);
    }
  }

  /**
   * The knobs in force that no rule can take, one line each naming the knob and the bound it
   * breaks; they are ignored. Empty when every knob applies.
   */
  public List<String> knobProblems() {
    return compiled.knobProblems();
  }

  /** {@return the knobs this limiter applies: {@link Knobs#NONE} until some are applied} */
  public synchronized Knobs knobs() {
    return changes.knobs();
  }

  /**
   * Stops reading the knobs, if this limiter reads them, and hands the store what this instance
   * holds: every concurrency slot its requests still hold is given back, and what its two-layer
   * counters and its local decisions ({@code onStoreFailure: local}) counted is pushed, waiting up
   * to 2 s for each ({@link Engine#close}). Call it before closing the store.
   */
  public void close() {
    watcher.ifPresent(KnobWatcher::close);
    engine.close();
  }

  /**
   * The kill switch: false stops all limiting (and counting) until set back to true. It holds over
   * {@link #update}s (a rules file's reloads) that leave the rules' own {@code enabled} as it was;
   * one that changes it wins.
   */
  public void setEnabled(boolean enabled) {
    change(c -> changes.setEnabled(c, enabled));
  }

  /** Turns one rule on or off; over {@link #update}s as {@link #setEnabled} does. */
  public void setRuleEnabled(String id, boolean enabled) {
    change(c -> changes.setRuleEnabled(c, id, enabled));
  }

  /**
   * Puts one rule in or out of shadow mode (count and report, never reject); over {@link #update}s
   * as {@link #setEnabled} does.
   */
  public void setRuleShadow(String id, boolean shadow) {
    change(c -> changes.setRuleShadow(c, id, shadow));
  }

  private synchronized void change(UnaryOperator<CompiledRules> f) {
    this.compiled = f.apply(compiled);
    LOG.info("rate limit rules in force:\n{}", this);
  }

  /** Configures a {@link RequestLimiter}. */
  public static final class Builder extends LimiterBuilder<Builder> {
    private RuleSet rules = RuleSet.builder().build();
    private QuotaResolver quotas = QuotaResolver.NONE;
    private final Map<String, KeyResolver> apps = new HashMap<>();

    /**
     * A request reads the system clock (about 25 ns) rather than the coarse clock, whose thread
     * wakes every millisecond while requests come: 11–18 ms of CPU a second, more than the readings
     * it saves below some 700,000 decisions a second.
     */
    private Builder(CounterStore store) {
      super(store, InstantSource.system());
    }

    public Builder rules(RuleSet rules) {
      this.rules = Objects.requireNonNull(rules, "rules");
      return this;
    }

    /** Per-identity limits; none by default. */
    public Builder quotaResolver(QuotaResolver quotas) {
      this.quotas = Objects.requireNonNull(quotas, "quotaResolver");
      return this;
    }

    /**
     * Registers the key source {@code app:NAME}: an identity the application resolves from its own
     * data (the customer of a validated API key, say). A rule keyed on an {@code app:} source with
     * no resolver registered is refused when the rules are put in force.
     */
    public Builder keyResolver(String name, KeyResolver resolver) {
      Objects.requireNonNull(name, "name");
      if (name.isBlank() || name.indexOf(':') >= 0) {
        throw new IllegalArgumentException("a key resolver's name is a plain word: '" + name + "'");
      }
      apps.put(name.trim(), Objects.requireNonNull(resolver, "resolver"));
      return this;
    }

    private final KnobRefresh knobRefresh = new KnobRefresh();

    /**
     * Reads the fleet's {@link Knobs} from the store every {@code refresh} ({@link
     * KnobWatcher#DEFAULT_REFRESH} is a good default) and applies them. Off by default.
     *
     * @throws IllegalArgumentException if the store keeps no shared values, or {@code refresh} is
     *     not positive
     */
    public Builder knobs(Duration refresh) {
      knobRefresh.every(this::sharedValues, refresh);
      return this;
    }

    private Optional<KnobWatcher> watch(java.util.function.Consumer<Knobs> apply) {
      return knobRefresh.start(this::sharedValues, backgroundScheduler(), apply);
    }

    public RequestLimiter build() {
      return new RequestLimiter(this);
    }
  }

  /**
   * {@return the rules in force, one a line, bound ones included; what start-up and reloads log}
   */
  @Override
  public String toString() {
    return changes.describe(compiled);
  }
}
