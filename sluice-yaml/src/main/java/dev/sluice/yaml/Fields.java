package dev.sluice.yaml;

import dev.sluice.Periods;
import dev.sluice.Tier;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;

/**
 * Typed reads of a rules file's nodes, each failing with a {@link RulesException} that names the
 * file, the line and the field. The readers of each section extend it.
 */
class Fields {
  private final String file;

  Fields(String file) {
    this.file = file;
  }

  RuntimeException error(Node node, String field, String problem) {
    return new RulesException(file, node.getStartMark().getLine() + 1, field, problem);
  }

  /** Runs a builder step, turning its IllegalArgumentException into a RulesException here. */
  <T> T check(Node node, String f, Supplier<T> step) {
    try {
      return step.get();
    } catch (RulesException e) {
      throw e;
    } catch (IllegalArgumentException e) {
      throw error(node, f, e.getMessage());
    }
  }

  Node require(Map<String, Node> m, Node parent, String f, String key) {
    Node n = m.get(key);
    if (n == null) {
      throw error(parent, f + "." + key, "missing");
    }
    return n;
  }

  Map<String, Node> mapping(Node node, String f, Set<String> allowed) {
    if (!(node instanceof MappingNode mn)) {
      throw error(node, f, "expected a mapping");
    }
    Map<String, Node> out = new LinkedHashMap<>();
    for (NodeTuple t : mn.getValue()) {
      String k = scalar(t.getKeyNode(), f);
      if (out.containsKey(k)) {
        throw error(t.getKeyNode(), f.equals("(top level)") ? k : f + "." + k, "duplicate field");
      }
      if (!allowed.contains(k)) {
        String where = f.equals("(top level)") ? k : f + "." + k;
        throw error(
            t.getKeyNode(),
            where,
            "unknown field (expected one of " + new TreeSet<>(allowed) + ")");
      }
      out.put(k, t.getValueNode());
    }
    return out;
  }

  List<Node> sequence(Node node, String f) {
    if (!(node instanceof SequenceNode sn)) {
      throw error(node, f, "expected a list");
    }
    return sn.getValue();
  }

  String scalar(Node node, String f) {
    if (!(node instanceof ScalarNode sn)) {
      throw error(node, f, "expected a single value");
    }
    return sn.getValue();
  }

  boolean bool(Node node, String f) {
    String v = scalar(node, f);
    return switch (v) {
      case "true" -> true;
      case "false" -> false;
      default -> throw error(node, f, "expected true or false, was '" + v + "'");
    };
  }

  /** A whole number &gt; 0. */
  long wholeNumber(Node node, String f) {
    String text = scalar(node, f);
    long v;
    try {
      v = Long.parseLong(text.trim());
    } catch (NumberFormatException e) {
      throw error(node, f, "not a whole number: '" + text + "'");
    }
    if (v <= 0) {
      throw error(node, f, "must be > 0 (was " + v + ")");
    }
    return v;
  }

  /**
   * A limit, burst or capacity: a whole number from 1 to {@link Tier#MAX_LIMIT} (10^15), beyond
   * which a count's arithmetic could saturate.
   */
  long limit(Node node, String f) {
    String text = scalar(node, f).trim();
    if (text.matches("[0-9]{17,}")) {
      throw error(node, f, "must be at most " + Tier.MAX_LIMIT + " (10^15), was " + text);
    }
    long v = wholeNumber(node, f);
    if (v > Tier.MAX_LIMIT) {
      throw error(node, f, "must be at most " + Tier.MAX_LIMIT + " (10^15), was " + v);
    }
    return v;
  }

  /** A fraction in [0, 1): {@code 0.2} or {@code 20%}. */
  double fraction(Node node, String f) {
    String text = scalar(node, f).trim();
    try {
      double v =
          text.endsWith("%")
              ? Double.parseDouble(text.substring(0, text.length() - 1).trim()) / 100
              : Double.parseDouble(text);
      if (v >= 0 && v < 1) {
        return v;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw error(node, f, "a fraction from 0 to under 1, e.g. 0.2 or 20%: '" + text + "'");
  }

  /** A duration such as {@code 500ms}, {@code 28s} or {@code 2m}; 0 allowed; at most 366d. */
  Duration duration(Node node, String f) {
    String text = scalar(node, f).trim();
    Duration d = text.equals("0") ? Duration.ZERO : Periods.read(text).orElse(null);
    if (d == null) {
      throw error(node, f, "bad duration '" + text + "' (use e.g. 500ms, 28s, 2m)");
    }
    return atMostAYear(node, f, d);
  }

  /** The longest duration the file takes anywhere: 366 days, a tier's longest period. */
  static final Duration LONGEST = Duration.ofDays(366);

  /** {@code d}, unless it is longer than {@value #LONGEST_TEXT}. */
  Duration atMostAYear(Node node, String f, Duration d) {
    if (d.compareTo(LONGEST) > 0) {
      throw error(node, f, "must be at most " + LONGEST_TEXT + " (was " + d.toDays() + " days)");
    }
    return d;
  }

  static final String LONGEST_TEXT = "366d";

  /** A match's {@code methods}: a list of HTTP method names. */
  String[] methods(Node node, String f) {
    List<Node> items = sequence(node, f);
    String[] methods = new String[items.size()];
    for (int i = 0; i < items.size(); i++) {
      String v = scalar(items.get(i), f + "[" + i + "]");
      if (!v.matches("[A-Za-z]{1,20}")) {
        throw error(items.get(i), f + "[" + i + "]", "not an HTTP method: '" + v + "'");
      }
      methods[i] = v;
    }
    return methods;
  }
}
