package dev.sluice.spring;

import java.beans.PropertyDescriptor;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.springframework.beans.BeanUtils;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.DataObjectPropertyName;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.EnumerablePropertySource;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/**
 * The {@code sluice.*} names set in an environment that {@link SluiceProperties} does not bind,
 * each with the nearest name it does when one is close: a typo such as {@code sluice.rule} would
 * otherwise leave the application running with no limits and nothing in the log.
 *
 * <p>Names are compared as Spring Boot binds them: {@code sluice.rules-check-interval}, {@code
 * sluice.rulesCheckInterval} and {@code sluice.rules_check_interval} in any property source, and
 * {@code SLUICE_RULESCHECKINTERVAL} or {@code SLUICE_RULES_CHECK_INTERVAL} in the system
 * environment, are one known name; an element of a list ({@code sluice.filter.url-patterns[0]}) is
 * its list's.
 */
final class UnknownProperties {

  static final String PREFIX = "sluice";

  /** A name {@link SluiceProperties} binds, canonical (kebab case), and whether it has elements. */
  record Known(String name, boolean elements) {

    /** The name as written in a properties file, without dashes or case: how names compare. */
    String relaxed() {
      return name.replace("-", "");
    }

    /** The name as an environment variable, dashes dropped: {@code SLUICE_RULESCHECKINTERVAL}. */
    String env() {
      return name.replace("-", "").replace('.', '_').toUpperCase(Locale.ROOT);
    }

    /** The older environment form, dashes as underscores: {@code SLUICE_RULES_CHECK_INTERVAL}. */
    String legacyEnv() {
      return name.replace('-', '_').replace('.', '_').toUpperCase(Locale.ROOT);
    }
  }

  /** Every name {@link SluiceProperties} binds. */
  static final List<Known> KNOWN = List.copyOf(known(PREFIX, SluiceProperties.class));

  private UnknownProperties() {}

  /**
   * One warning per distinct unknown {@code sluice.*} name set in {@code env}, naming it as written
   * and its property source, and the nearest known name when one is close; then, if any {@code
   * sluice.*} name is set but {@code sluice.rules} is not, one warning that the starter configures
   * nothing.
   */
  static List<String> warnings(ConfigurableEnvironment env) {
    Set<String> seen = new LinkedHashSet<>();
    List<String> warnings = new ArrayList<>();
    boolean any = false;
    for (PropertySource<?> source : env.getPropertySources()) {
      if (!(source instanceof EnumerablePropertySource<?> names)) {
        continue;
      }
      boolean environment = isSystemEnvironment(source);
      for (String name : names.getPropertyNames()) {
        boolean envForm = environment && name.toUpperCase(Locale.ROOT).startsWith("SLUICE_");
        if (!envForm && !name.toLowerCase(Locale.ROOT).startsWith(PREFIX + ".")) {
          continue;
        }
        any = true;
        if ((envForm ? knownEnv(name) : knownProperty(name)) || !seen.add(name)) {
          continue;
        }
        String warning =
            name + " (in " + source.getName() + ") is not a Sluice property and is ignored";
        Optional<Known> nearest = nearest(name);
        if (nearest.isPresent()) {
          Known k = nearest.get();
          warning +=
              "; did you mean " + (envForm ? k.env() + " (" + k.name() + ")" : k.name()) + "?";
        }
        warnings.add(warning);
      }
    }
    if (any && !Binder.get(env).bind(PREFIX + ".rules", String.class).isBound()) {
      warnings.add(
          "sluice.* properties are set but sluice.rules is not: the Sluice starter configures"
              + " no limiter and limits nothing");
    }
    return warnings;
  }

  /** Whether {@code name}, from a properties file or the like, is one {@link #KNOWN} binds. */
  static boolean knownProperty(String name) {
    // An index or map key becomes an element: url-patterns[0] → url-patterns.0
    String n = name.toLowerCase(Locale.ROOT).replaceAll("\\[([^\\]]*)\\]", ".$1");
    n = n.replace("-", "").replace("_", "");
    for (Known k : KNOWN) {
      String r = k.relaxed();
      if (n.equals(r) || (k.elements() && n.startsWith(r + "."))) {
        return true;
      }
    }
    return false;
  }

  /** Whether {@code name}, an environment variable, is one {@link #KNOWN} binds. */
  static boolean knownEnv(String name) {
    String n = name.toUpperCase(Locale.ROOT);
    for (Known k : KNOWN) {
      for (String e : List.of(k.env(), k.legacyEnv())) {
        if (n.equals(e) || (k.elements() && n.startsWith(e + "_"))) {
          return true;
        }
      }
    }
    return false;
  }

  /**
   * The known name nearest to {@code name} when it is close: at most 2 edits away, or a quarter of
   * the known name's length, comparing letters and digits after {@code sluice} only.
   */
  static Optional<Known> nearest(String name) {
    String n = letters(name);
    Known best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (Known k : KNOWN) {
      String candidate = letters(k.name());
      int d = distance(n, candidate);
      if (d < bestDistance && d <= Math.max(2, candidate.length() / 4)) {
        best = k;
        bestDistance = d;
      }
    }
    return Optional.ofNullable(best);
  }

  private static String letters(String name) {
    return name.toLowerCase(Locale.ROOT).substring(PREFIX.length()).replaceAll("[^a-z0-9]", "");
  }

  /** Levenshtein distance. */
  static int distance(String a, String b) {
    int[] previous = new int[b.length() + 1];
    int[] current = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      previous[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      current[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int substitute = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
        current[j] = Math.min(substitute, Math.min(previous[j], current[j - 1]) + 1);
      }
      int[] t = previous;
      previous = current;
      current = t;
    }
    return previous[b.length()];
  }

  private static boolean isSystemEnvironment(PropertySource<?> source) {
    return source instanceof SystemEnvironmentPropertySource
        || source.getName().equals(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME);
  }

  /**
   * The names a class binds under {@code prefix}: a property with a setter is a name (with elements
   * when it is a list, set, map or array); one without, whose type is a class nested in {@link
   * SluiceProperties}, is a group of names.
   */
  private static List<Known> known(String prefix, Class<?> type) {
    List<Known> out = new ArrayList<>();
    for (PropertyDescriptor p : BeanUtils.getPropertyDescriptors(type)) {
      Class<?> t = p.getPropertyType();
      if (p.getReadMethod() == null || t == null || p.getName().equals("class")) {
        continue;
      }
      String name = prefix + "." + DataObjectPropertyName.toDashedForm(p.getName());
      if (p.getWriteMethod() != null) {
        boolean elements =
            Collection.class.isAssignableFrom(t) || Map.class.isAssignableFrom(t) || t.isArray();
        out.add(new Known(name, elements));
      } else if (t.getEnclosingClass() == SluiceProperties.class) {
        out.addAll(known(name, t));
      }
    }
    return out;
  }
}
