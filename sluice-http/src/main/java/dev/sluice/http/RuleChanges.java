package dev.sluice.http;

import dev.sluice.control.Knobs;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;

/**
 * How the rules a {@link RequestLimiter} has in force change: each change (a new rule set, rules
 * bound to an adapter, knobs, one rule's switch) compiles them again, with the knobs in force over
 * them, into the {@link CompiledRules} the limiter then swaps in whole. Called under the limiter's
 * lock; the limiter keeps what is in force.
 */
final class RuleChanges {

  private final RuleCompiler compiler;
  private volatile Knobs knobs = Knobs.NONE;

  /** The rule set as last given ({@link #first}, {@link #update}), without the switches. */
  private RuleSet given;

  /**
   * A switch set at runtime to {@code value} over the given setting {@code over}: it holds over
   * reloads of the rules while they leave that setting as it was, and a reload that changes it
   * wins.
   */
  private record Switch(boolean over, boolean value) {}

  private Switch killSwitch;
  private Map<String, Switch> enabled = Map.of();
  private Map<String, Switch> shadow = Map.of();

  RuleChanges(RuleCompiler compiler) {
    this.compiler = compiler;
  }

  /** {@return {@code rules}, with no bound rules, compiled} */
  CompiledRules first(RuleSet rules) {
    given = rules;
    return compiler.compile(rules, List.of(), knobs, null);
  }

  /**
   * {@return {@code c} with {@code rules} bound, their ids added to {@code ids}}
   *
   * @throws IllegalArgumentException if a rule's id is already in force
   */
  CompiledRules bind(CompiledRules c, List<Rule> rules, List<String> ids) {
    List<Rule> all = new ArrayList<>(c.bound());
    for (Rule r : rules) {
      if (c.rules().rule(r.id()).isPresent() || all.stream().anyMatch(b -> b.id().equals(r.id()))) {
        throw new IllegalArgumentException("duplicate rule id '" + r.id() + "'");
      }
      all.add(r);
      ids.add(r.id());
    }
    return compiler.compile(c.rules(), all, knobs, c);
  }

  /**
   * {@return {@code rules} in place of {@code c}'s rule set, its bound rules kept}
   *
   * @throws IllegalArgumentException if a rule's id is that of a bound rule
   */
  CompiledRules update(CompiledRules c, RuleSet rules) {
    Objects.requireNonNull(rules, "rules");
    for (Rule r : c.bound()) {
      if (rules.rule(r.id()).isPresent()) {
        throw new IllegalArgumentException(
            "rule id '" + r.id() + "' is already bound to an annotated method");
      }
    }
    Switch kill = killSwitch == null || killSwitch.over() != rules.enabled() ? null : killSwitch;
    Map<String, Switch> on = unchanged(enabled, rules, Rule::enabled);
    Map<String, Switch> shadowed = unchanged(shadow, rules, Rule::shadow);
    return commit(c, rules, kill, on, shadowed);
  }

  /** {@return {@code c} with the kill switch set to {@code on}, over reloads} */
  CompiledRules setEnabled(CompiledRules c, boolean on) {
    return commit(c, given, new Switch(given.enabled(), on), enabled, shadow);
  }

  /**
   * Compiles {@code rules} with the switches over them and keeps them all, once they compiled: a
   * change that fails leaves everything as it was.
   */
  private CompiledRules commit(
      CompiledRules c,
      RuleSet rules,
      Switch kill,
      Map<String, Switch> on,
      Map<String, Switch> shadowed) {
    CompiledRules out = compiler.compile(switched(rules, kill, on, shadowed), c.bound(), knobs, c);
    given = rules;
    killSwitch = kill;
    enabled = on;
    shadow = shadowed;
    return out;
  }

  /**
   * {@return {@code c} with rule {@code id} turned on or off}
   *
   * @throws IllegalArgumentException if no rule has that id
   */
  CompiledRules setRuleEnabled(CompiledRules c, String id, boolean on) {
    return switchRule(c, id, false, Rule::enabled, b -> b.enabled(on), on);
  }

  /**
   * {@return {@code c} with rule {@code id} in or out of shadow mode}
   *
   * @throws IllegalArgumentException if no rule has that id
   */
  CompiledRules setRuleShadow(CompiledRules c, String id, boolean on) {
    return switchRule(c, id, true, Rule::shadow, b -> b.shadow(on), on);
  }

  /**
   * A switch of a rule of the given set ({@code shadowSwitch}: its shadow mode, else whether it is
   * on), kept over reloads; a bound rule is changed where it is, since reloads keep it.
   */
  private CompiledRules switchRule(
      CompiledRules c,
      String id,
      boolean shadowSwitch,
      Predicate<Rule> setting,
      UnaryOperator<Rule.Builder> f,
      boolean on) {
    Optional<Rule> r = given.rule(id);
    if (r.isEmpty()) {
      return replaceBound(c, id, f);
    }
    Map<String, Switch> changed = new HashMap<>(shadowSwitch ? shadow : enabled);
    changed.put(id, new Switch(setting.test(r.get()), on));
    return shadowSwitch
        ? commit(c, given, killSwitch, enabled, changed)
        : commit(c, given, killSwitch, changed, shadow);
  }

  /**
   * {@code switches} but those whose setting {@code rules} changes (the edit wins) or whose rule it
   * removes.
   */
  private static Map<String, Switch> unchanged(
      Map<String, Switch> switches, RuleSet rules, Predicate<Rule> setting) {
    Map<String, Switch> kept = new HashMap<>(switches);
    kept.entrySet()
        .removeIf(
            s ->
                rules
                    .rule(s.getKey())
                    .map(r -> setting.test(r) != s.getValue().over())
                    .orElse(true));
    return kept;
  }

  /** {@code rules} with the switches set at runtime over them. */
  private static RuleSet switched(
      RuleSet rules, Switch kill, Map<String, Switch> enabled, Map<String, Switch> shadow) {
    if (kill == null && enabled.isEmpty() && shadow.isEmpty()) {
      return rules;
    }
    RuleSet.Builder out = rules.toBuilder().clearRules();
    if (kill != null) {
      out.enabled(kill.value());
    }
    for (Rule r : rules.rules()) {
      Switch on = enabled.get(r.id());
      Switch shadowed = shadow.get(r.id());
      if (on == null && shadowed == null) {
        out.rule(r);
        continue;
      }
      Rule.Builder b = r.toBuilder();
      if (on != null) {
        b.enabled(on.value());
      }
      if (shadowed != null) {
        b.shadow(shadowed.value());
      }
      out.rule(b.build());
    }
    return out.build();
  }

  /** {@return {@code c} with {@code knobs} over it; {@code c} itself when they are in force} */
  CompiledRules knobs(CompiledRules c, Knobs knobs) {
    Objects.requireNonNull(knobs, "knobs");
    if (knobs.equals(this.knobs)) {
      return c;
    }
    this.knobs = knobs;
    return compiler.compile(c.rules(), c.bound(), knobs, c);
  }

  /** {@return the knobs over the rules} */
  Knobs knobs() {
    return knobs;
  }

  /**
   * {@return {@code c} with bound rule {@code id} as {@code f} changes it}
   *
   * @throws IllegalArgumentException if no rule has that id
   */
  private CompiledRules replaceBound(CompiledRules c, String id, UnaryOperator<Rule.Builder> f) {
    List<Rule> bound = new ArrayList<>(c.bound().size());
    boolean found = false;
    for (Rule r : c.bound()) {
      found |= r.id().equals(id);
      bound.add(r.id().equals(id) ? f.apply(r.toBuilder()).build() : r);
    }
    if (!found) {
      throw new IllegalArgumentException("no rule with id '" + id + "'");
    }
    return compiler.compile(c.rules(), bound, knobs, c);
  }

  /** {@return whether any rule of {@code c}, bound ones included, keys on {@code ip}} */
  static boolean keysOnClientAddress(CompiledRules c) {
    List<Rule> all = new ArrayList<>(c.rules().rules());
    all.addAll(c.bound());
    for (Rule r : all) {
      for (String k : r.key()) {
        if (KeySource.parse(k).kind == KeySource.Kind.IP) {
          return true;
        }
      }
    }
    return false;
  }

  /** {@return the rules of {@code c}, one a line, bound ones included, and the knobs over them} */
  String describe(CompiledRules c) {
    StringBuilder sb = new StringBuilder(c.rules().toString());
    for (Rule r : c.bound()) {
      sb.append(r).append(" (bound)\n");
    }
    Knobs k = knobs;
    if (!k.equals(Knobs.NONE)) {
      sb.append("knobs over them: ").append(k.format().strip().replace("\n", "; ")).append('\n');
    }
    return sb.toString();
  }
}
