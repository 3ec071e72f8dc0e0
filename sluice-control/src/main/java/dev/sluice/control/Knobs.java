package dev.sluice.control;

import dev.sluice.spi.SharedValues;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalLong;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * Runtime overrides the whole fleet shares through the store: a snapshot of every knob that is set.
 * Each target has its own fields:
 *
 * <ul>
 *   <li>{@code global}: {@code enabled} (false is the fleet-wide kill switch);
 *   <li>{@code rule:ID}: {@code enabled}, {@code shadow}, and {@code limit}, which replaces the
 *       rule's first tier's limit and scales its other tiers by the same ratio, as a quota does;
 *   <li>{@code throttle:NAME}: {@code rate} (permits per second; 0 stops the throttle, -1 lets
 *       everything through) and {@code burst} (a multiplier of at least 1).
 * </ul>
 *
 * <p>In the store the knobs are one text value, one target a line: {@code rule:search limit=2
 * shadow=false}. An unset knob leaves the value from the rules or the code in force. Immutable.
 */
public final class Knobs {

  /** The name of the knobs' value in {@link SharedValues}. */
  public static final String VALUE_NAME = "knobs";

  /** No knob set. */
  public static final Knobs NONE = new Knobs(Map.of());

  private static final java.util.regex.Pattern WHITESPACE = java.util.regex.Pattern.compile("\\s+");

  private final Map<String, Map<String, String>> targets;

  private Knobs(Map<String, Map<String, String>> targets) {
    this.targets = targets;
  }

  /**
   * Parses the stored text, refusing it whole at the first bad line.
   *
   * @throws IllegalArgumentException naming the line and what is wrong with it
   */
  public static Knobs parse(String text) {
    return parse(
        text,
        NONE,
        problem -> {
          throw new IllegalArgumentException(problem);
        });
  }

  /**
   * Parses the stored text line by line: a bad line is reported to {@code problems} and its target
   * keeps the value it has in {@code lastGood}, so one malformed knob never undoes the others.
   */
  public static Knobs parse(String text, Knobs lastGood, Consumer<String> problems) {
    Map<String, Map<String, String>> out = new LinkedHashMap<>();
    String[] lines = text.split("\n", -1);
    for (int i = 0; i < lines.length; i++) {
      String line = lines[i].strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      String[] words = WHITESPACE.split(line, -1);
      String target = words[0];
      try {
        checkTarget(target);
        Map<String, String> fields = new LinkedHashMap<>();
        for (int w = 1; w < words.length; w++) {
          int eq = words[w].indexOf('=');
          if (eq <= 0) {
            throw new IllegalArgumentException("'" + words[w] + "' is not FIELD=VALUE");
          }
          String field = words[w].substring(0, eq);
          fields.put(field, normalize(target, field, words[w].substring(eq + 1)));
        }
        if (!fields.isEmpty()) {
          out.put(target, Collections.unmodifiableMap(fields));
        }
      } catch (IllegalArgumentException e) {
        problems.accept("knobs line " + (i + 1) + " (" + target + "): " + e.getMessage());
        Map<String, String> kept = lastGood.targets.get(target);
        if (kept != null) {
          out.put(target, kept);
        }
      }
    }
    return out.isEmpty() ? NONE : new Knobs(Collections.unmodifiableMap(out));
  }

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Knobs.class);

  /** Knob problems already logged, so each is logged once. */
  private static final java.util.Set<String> LOGGED =
      java.util.concurrent.ConcurrentHashMap.newKeySet();

  /**
   * Logs, once per problem, that a knob is ignored because what it targets cannot take it: the
   * target keeps its own settings, and every other knob, rules reload and start goes on.
   */
  public static void ignored(String problem) {
    if (LOGGED.size() > 1_000) {
      LOGGED.clear();
    }
    if (LOGGED.add(problem)) {
      LOG.warn("knob ignored: {}", problem);
    }
  }

  /** {@return the text the store keeps: one target a line} */
  public String format() {
    StringBuilder sb = new StringBuilder();
    targets.forEach(
        (t, fields) -> {
          sb.append(t);
          fields.forEach((f, v) -> sb.append(' ').append(f).append('=').append(v));
          sb.append('\n');
        });
    return sb.toString();
  }

  /**
   * These knobs with {@code field} of {@code target} set.
   *
   * @throws IllegalArgumentException for an unknown target or field, or a value out of range
   */
  public Knobs with(String target, String field, String value) {
    checkTarget(target);
    String v = normalize(target, field, value);
    Map<String, Map<String, String>> out = new LinkedHashMap<>(targets);
    Map<String, String> fields = new LinkedHashMap<>(targets.getOrDefault(target, Map.of()));
    fields.put(field, v);
    out.put(target, Collections.unmodifiableMap(fields));
    return new Knobs(Collections.unmodifiableMap(out));
  }

  /** These knobs without any for {@code target}. */
  public Knobs without(String target) {
    if (!targets.containsKey(target)) {
      return this;
    }
    Map<String, Map<String, String>> out = new LinkedHashMap<>(targets);
    out.remove(target);
    return out.isEmpty() ? NONE : new Knobs(Collections.unmodifiableMap(out));
  }

  /** Every target that has a knob set, with its fields, in the order they were first set. */
  public Map<String, Map<String, String>> targets() {
    return targets;
  }

  /** {@return the fleet-wide switch: false unless {@code global enabled=false} is set} */
  public boolean enabled() {
    return !"false".equals(field("global", "enabled"));
  }

  /** The {@code enabled} knob of rule {@code id}, if set. */
  public Optional<Boolean> ruleEnabled(String id) {
    return bool("rule:" + id, "enabled");
  }

  /** The {@code shadow} knob of rule {@code id}, if set. */
  public Optional<Boolean> ruleShadow(String id) {
    return bool("rule:" + id, "shadow");
  }

  /** The {@code limit} knob of rule {@code id}, if set. */
  public OptionalLong ruleLimit(String id) {
    String v = field("rule:" + id, "limit");
    return v == null ? OptionalLong.empty() : OptionalLong.of(Long.parseLong(v));
  }

  /** The {@code rate} knob of throttle {@code name}, if set. */
  public OptionalDouble throttleRate(String name) {
    return number("throttle:" + name, "rate");
  }

  /** The {@code burst} knob of throttle {@code name}, if set. */
  public OptionalDouble throttleBurst(String name) {
    return number("throttle:" + name, "burst");
  }

  /**
   * Changes the fleet's knobs: reads them, applies {@code change} and writes them back, again if
   * another writer got there in between. A stored line that no longer parses is dropped.
   *
   * @return the knobs now in the store
   * @throws IllegalArgumentException if {@code change} refuses a value
   * @throws RuntimeException if the store cannot be read or written
   */
  public static Knobs change(SharedValues values, UnaryOperator<Knobs> change) {
    for (int attempt = 0; ; attempt++) {
      Optional<SharedValues.Versioned> stored = values.get(VALUE_NAME);
      Knobs now = stored.map(v -> parse(v.value(), NONE, p -> {})).orElse(NONE);
      Knobs next = change.apply(now);
      // Kept even when empty, so "cleared" and "never set or lost" read the same: no knobs.
      if (values.compareAndSet(
          VALUE_NAME,
          stored.map(SharedValues.Versioned::version).orElse(0L),
          next.format(),
          Duration.ZERO)) {
        return next;
      }
      if (attempt == 100) {
        throw new IllegalStateException("the knobs kept changing under 100 attempts to write them");
      }
    }
  }

  private String field(String target, String field) {
    Map<String, String> f = targets.get(target);
    return f == null ? null : f.get(field);
  }

  private Optional<Boolean> bool(String target, String field) {
    return Optional.ofNullable(field(target, field)).map(Boolean::valueOf);
  }

  private OptionalDouble number(String target, String field) {
    String v = field(target, field);
    return v == null ? OptionalDouble.empty() : OptionalDouble.of(Double.parseDouble(v));
  }

  /**
   * Checks a target's form: {@code global}, {@code rule:ID} or {@code throttle:NAME}.
   *
   * @throws IllegalArgumentException if it has none of those forms
   */
  public static void checkTarget(String target) {
    if (target.equals("global")) {
      return;
    }
    int colon = target.indexOf(':');
    String kind = colon < 0 ? "" : target.substring(0, colon);
    String name = colon < 0 ? "" : target.substring(colon + 1);
    if (!(kind.equals("rule") || kind.equals("throttle"))
        || name.isEmpty()
        || name.chars().anyMatch(c -> c <= ' ' || c == '=' || c > '~')) {
      throw new IllegalArgumentException(
          "unknown target '" + target + "' (use global, rule:ID or throttle:NAME)");
    }
  }

  /** The value in its stored form, or an exception saying why the field or value is refused. */
  private static String normalize(String target, String field, String value) {
    String kind = target.equals("global") ? "global" : target.substring(0, target.indexOf(':'));
    String fields =
        switch (kind) {
          case "global" -> "enabled";
          case "rule" -> "enabled, shadow, limit";
          default -> "rate, burst";
        };
    String known = "," + fields.replace(" ", "") + ",";
    if (!known.contains("," + field + ",")) {
      throw new IllegalArgumentException(
          "unknown field '" + field + "' for " + kind + " (fields: " + fields + ")");
    }
    String v = value.strip().toLowerCase(Locale.ROOT);
    switch (field) {
      case "enabled", "shadow" -> {
        if (!v.equals("true") && !v.equals("false")) {
          throw new IllegalArgumentException(field + " is true or false, not '" + value + "'");
        }
        return v;
      }
      case "limit" -> {
        long l;
        try {
          l = Long.parseLong(v);
        } catch (NumberFormatException e) {
          throw new IllegalArgumentException("limit is a whole number, not '" + value + "'");
        }
        if (l < 1) {
          throw new IllegalArgumentException(
              "limit must be at least 1, not " + l + " (enabled=false turns a rule off)");
        }
        return Long.toString(l);
      }
      default -> {
        double d;
        try {
          d = Double.parseDouble(v);
        } catch (NumberFormatException e) {
          throw new IllegalArgumentException(field + " is a number, not '" + value + "'");
        }
        if ((field.equals("rate") && !(d >= 0 || d == -1)) || !Double.isFinite(d)) {
          throw new IllegalArgumentException(
              "rate is permits per second, at least 0 (or -1 for unlimited), not " + value);
        }
        if (field.equals("burst") && !(d >= 1)) {
          throw new IllegalArgumentException("burst is a multiplier of at least 1, not " + value);
        }
        return stripZeros(d);
      }
    }
  }

  private static String stripZeros(double d) {
    return d == Math.rint(d) && Math.abs(d) < 1e15 ? Long.toString((long) d) : Double.toString(d);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Knobs k && k.targets.equals(targets);
  }

  @Override
  public int hashCode() {
    return targets.hashCode();
  }

  @Override
  public String toString() {
    return targets.isEmpty() ? "(no knobs set)" : format().strip();
  }
}
