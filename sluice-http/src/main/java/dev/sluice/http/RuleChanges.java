package dev.sluice.http;

import dev.sluice.control.Knobs;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
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

  RuleChanges(RuleCompiler compiler) {
    this.compiler = compiler;
  }

  /** {@return {@code rules}, with no bound rules, compiled} */
  CompiledRules first(RuleSet rules) {
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
    return compiler.compile(rules, c.bound(), knobs, c);
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
   * {@return {@code c} with rule {@code id}, of the rule set or bound, as {@code f} changes it}
   *
   * @throws IllegalArgumentException if no rule has that id
   */
  CompiledRules replace(CompiledRules c, String id, UnaryOperator<Rule.Builder> f) {
    if (c.rules().rule(id).isPresent()) {
      RuleSet.Builder out = c.rules().toBuilder().clearRules();
      for (Rule r : c.rules().rules()) {
        out.rule(r.id().equals(id) ? f.apply(r.toBuilder()).build() : r);
      }
      return update(c, out.build());
    }
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
