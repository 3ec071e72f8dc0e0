package dev.sluice.http;

import dev.sluice.control.Knobs;
import dev.sluice.engine.Engine;
import dev.sluice.engine.Policy;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Compiles a rule set for requests: checks each rule's keys, applies the knobs (a rule's {@code
 * enabled}, {@code shadow} and {@code limit}), makes each enabled rule's policy and keeps the
 * load-shedding plan when its settings did not change.
 */
final class RuleCompiler {

  private final Engine engine;
  private final Map<String, KeyResolver> apps;

  RuleCompiler(Engine engine, Map<String, KeyResolver> apps) {
    this.engine = engine;
    this.apps = apps;
  }

  /**
   * {@code rules} and the {@code bound} ones under knobs {@code k}; {@code before} is the rules in
   * force, whose shedding plan is kept when unchanged (null at the start).
   */
  CompiledRules compile(RuleSet rules, List<Rule> bound, Knobs k, CompiledRules before) {
    List<Rule> all = new ArrayList<>(rules.rules());
    all.addAll(bound);
    for (Rule r : all) {
      for (String key : r.key()) {
        KeySource s = KeySource.parse(key);
        if (s.kind == KeySource.Kind.APP && !apps.containsKey(s.name)) {
          throw new IllegalArgumentException(
              "rule '"
                  + r.id()
                  + "' keys on "
                  + key
                  + ", but no key resolver '"
                  + s.name
                  + "' is registered (RequestLimiter.Builder.keyResolver)");
        }
      }
    }
    List<String> problems = new ArrayList<>(0);
    List<ActiveRule> active = new ArrayList<>();
    for (Rule r : rules.rules()) {
      Rule t = tuned(r, k);
      if (t.enabled()) {
        active.add(new ActiveRule(t, policy(t, k, problems)));
      }
    }
    Map<String, ActiveRule> boundActive = new HashMap<>();
    for (Rule r : bound) {
      Rule t = tuned(r, k);
      if (t.enabled()) {
        boundActive.put(r.id(), new ActiveRule(t, policy(t, k, problems)));
      }
    }
    SheddingPlan shed =
        rules
            .shedding()
            .map(
                s ->
                    before != null && before.shed() != null && before.shed().settings.equals(s)
                        ? before.shed()
                        : new SheddingPlan(s, engine))
            .orElse(null);
    boolean holdsSlots =
        shed != null
            || active.stream().anyMatch(ActiveRule::holdsSlots)
            || boundActive.values().stream().anyMatch(ActiveRule::holdsSlots);
    ActiveRule[] activeRules = active.toArray(new ActiveRule[0]);
    return new CompiledRules(
        rules,
        rules.enabled() && k.enabled(),
        activeRules,
        new RuleIndex(active.stream().map(a -> a.rule).toList()),
        List.copyOf(bound),
        Map.copyOf(boundActive),
        new ClientAddress(rules.trusted, rules.forwardedHeader(), rules.ipv6Prefix()),
        shed,
        holdsSlots,
        List.copyOf(problems));
  }

  /** The rule with its {@code enabled} and {@code shadow} knobs applied. */
  private static Rule tuned(Rule r, Knobs k) {
    Optional<Boolean> enabled = k.ruleEnabled(r.id());
    Optional<Boolean> shadow = k.ruleShadow(r.id());
    if (enabled.isEmpty() && shadow.isEmpty()) {
      return r;
    }
    Rule.Builder b = r.toBuilder();
    enabled.ifPresent(b::enabled);
    shadow.ifPresent(b::shadow);
    return b.build();
  }

  /**
   * The rule's policy, with its {@code limit} knob applied when the rule can take it; a knob it
   * cannot take is ignored (logged once, and added to {@code problems}).
   */
  private Policy policy(Rule r, Knobs k, List<String> problems) {
    Policy p =
        engine
            .policy(
                r.id(), r.algorithm(), r.tiers(), r.failClosed(), r.shadow(), r.staggerWindows())
            .withSync(r.sync())
            .withStoreFailure(r.onStoreFailure(), r.instances());
    OptionalLong limit = k.ruleLimit(r.id());
    if (limit.isEmpty()) {
      return p;
    }
    try {
      return p.withFirstLimit(limit.getAsLong());
    } catch (IllegalArgumentException e) {
      String problem = "rule:" + r.id() + " limit=" + limit.getAsLong() + ": " + e.getMessage();
      problems.add(problem);
      Knobs.ignored(problem);
      return p;
    }
  }
}
