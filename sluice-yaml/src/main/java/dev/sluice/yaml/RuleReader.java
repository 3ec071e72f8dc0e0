package dev.sluice.yaml;

import dev.sluice.Algorithm;
import dev.sluice.OnStoreFailure;
import dev.sluice.Periods;
import dev.sluice.Sync;
import dev.sluice.Tier;
import dev.sluice.http.Rule;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;

/** The {@code defaults} section and each of {@code rules}: match, key, tiers or concurrency. */
final class RuleReader extends Fields {
  private Algorithm defaultAlgorithm = Algorithm.SLIDING_WINDOW;
  private List<String> defaultKey = Rule.DEFAULT_KEY;
  private OnStoreFailure defaultOnStoreFailure = OnStoreFailure.ALLOW;

  /** {@code defaults.sync}: null for none. */
  private Duration defaultSync;

  private int defaultInstances = 1;

  /** {@code defaults.key}: null for none. */
  private Node defaultKeyNode;

  /** The {@code app:} sources a key may name; null: any (checked when the rules are in force). */
  private final Set<String> resolvers;

  RuleReader(String file, Set<String> resolvers) {
    super(file);
    this.resolvers = resolvers;
  }

  void defaults(Node node) {
    Map<String, Node> m =
        mapping(
            node, "defaults", Set.of("algorithm", "key", "onStoreFailure", "sync", "instances"));
    if (m.containsKey("sync")) {
      defaultSync = sync(m.get("sync"), "defaults.sync");
    }
    if (m.containsKey("instances")) {
      defaultInstances = instances(m.get("instances"), "defaults.instances");
    }
    if (m.containsKey("algorithm")) {
      defaultAlgorithm = algorithm(m.get("algorithm"), "defaults.algorithm");
    }
    if (m.containsKey("key")) {
      defaultKey = keys(m.get("key"), "defaults.key");
      defaultKeyNode = m.get("key");
    }
    if (m.containsKey("onStoreFailure")) {
      defaultOnStoreFailure = onStoreFailure(m.get("onStoreFailure"), "defaults.onStoreFailure");
    }
  }

  Rule rule(Node node, String f) {
    Map<String, Node> m =
        mapping(
            node,
            f,
            Set.of(
                "id",
                "match",
                "key",
                "algorithm",
                "tiers",
                "shadow",
                "enabled",
                "onStoreFailure",
                "staggerWindows",
                "sync",
                "instances",
                "concurrency",
                "slotTtl"));
    Node idNode = require(m, node, f, "id");
    String id = scalar(idNode, f + ".id");
    Rule.Builder b = check(idNode, f + ".id", () -> Rule.builder(id));
    Algorithm algorithm =
        m.containsKey("algorithm")
            ? algorithm(m.get("algorithm"), f + ".algorithm")
            : defaultAlgorithm;
    b.algorithm(algorithm);
    if (m.containsKey("match")) {
      match(m.get("match"), f + ".match", b);
    }
    List<String> key = m.containsKey("key") ? keys(m.get("key"), f + ".key") : defaultKey;
    Node keyNode = m.getOrDefault("key", node);
    check(keyNode, f + ".key", () -> b.key(key.toArray(new String[0])));
    pathCaptures(m, keyNode, f, key);
    if (m.containsKey("key")) {
      resolvers(keyNode, f + ".key", key);
    } else if (defaultKeyNode != null) {
      resolvers(defaultKeyNode, "defaults.key", key);
    }
    if (m.containsKey("concurrency")) {
      concurrency(m, f, b);
    } else {
      if (m.containsKey("slotTtl")) {
        throw error(m.get("slotTtl"), f + ".slotTtl", "only means something with concurrency");
      }
      tiers(m, node, f, b, algorithm);
    }
    b.shadow(m.containsKey("shadow") && bool(m.get("shadow"), f + ".shadow"));
    b.enabled(!m.containsKey("enabled") || bool(m.get("enabled"), f + ".enabled"));
    OnStoreFailure onFailure =
        m.containsKey("onStoreFailure")
            ? onStoreFailure(m.get("onStoreFailure"), f + ".onStoreFailure")
            : defaultOnStoreFailure;
    b.onStoreFailure(onFailure);
    if (m.containsKey("staggerWindows")) {
      b.staggerWindows(bool(m.get("staggerWindows"), f + ".staggerWindows"));
    }
    // Slots and buckets are never counted in two layers: a defaults sync does not reach them.
    boolean local = !m.containsKey("concurrency") && algorithm != Algorithm.TOKEN_BUCKET;
    if (!local && m.containsKey("sync")) {
      throw error(
          m.get("sync"),
          f + ".sync",
          "a token bucket is counted in the store on every decision (sync applies to windows)");
    }
    Duration sync =
        !local ? null : m.containsKey("sync") ? sync(m.get("sync"), f + ".sync") : defaultSync;
    int instances =
        m.containsKey("instances")
            ? instances(m.get("instances"), f + ".instances")
            : defaultInstances;
    if (sync != null) {
      b.sync(new Sync(sync, instances));
    } else if (onFailure == OnStoreFailure.LOCAL) {
      b.instances(instances);
    } else if (m.containsKey("instances")) {
      throw error(
          m.get("instances"),
          f + ".instances",
          "only means something with sync (e.g. sync: 200ms) or onStoreFailure: local");
    }
    return check(node, f, b::build);
  }

  /** A rule's {@code tiers}; a token bucket's one tier may have a {@code burst}. */
  void tiers(Map<String, Node> m, Node node, String f, Rule.Builder b, Algorithm algorithm) {
    Node tiersNode = require(m, node, f, "tiers");
    List<Node> tiers = sequence(tiersNode, f + ".tiers");
    if (tiers.isEmpty()) {
      throw error(tiersNode, f + ".tiers", "at least one tier is required");
    }
    boolean bucket = algorithm == Algorithm.TOKEN_BUCKET;
    if (bucket && tiers.size() > 1) {
      throw error(
          tiers.get(1),
          f + ".tiers[1]",
          "a token bucket has one tier { limit, period, burst }; use another rule for another"
              + " rate");
    }
    Map<Duration, Integer> periods = new HashMap<>();
    for (int i = 0; i < tiers.size(); i++) {
      String tf = f + ".tiers[" + i + "]";
      Map<String, Node> t = mapping(tiers.get(i), tf, Set.of("limit", "period", "burst"));
      Node limitNode = require(t, tiers.get(i), tf, "limit");
      long limit = limit(limitNode, tf + ".limit");
      Node periodNode = require(t, tiers.get(i), tf, "period");
      String periodText = scalar(periodNode, tf + ".period");
      Duration period = Periods.read(periodText).orElse(null);
      if (period == null || period.isZero()) {
        throw error(
            periodNode,
            tf + ".period",
            "bad period '" + periodText + "' (use e.g. 500ms, 10s, 5m, 1h, 1d)");
      }
      Integer before = periods.putIfAbsent(period, i);
      if (before != null) {
        throw error(
            periodNode,
            tf + ".period",
            "same period as "
                + f
                + ".tiers["
                + before
                + "] (one counter per period: keep the smaller limit)");
      }
      long burst = limit;
      if (t.containsKey("burst")) {
        if (!bucket) {
          throw error(
              t.get("burst"), tf + ".burst", "only means something with algorithm: token-bucket");
        }
        burst = limit(t.get("burst"), tf + ".burst");
      }
      if (bucket && Math.max(limit, burst) > Tier.MAX_BUCKET_TOKENS) {
        throw error(
            limit > Tier.MAX_BUCKET_TOKENS ? limitNode : t.get("burst"),
            limit > Tier.MAX_BUCKET_TOKENS ? tf + ".limit" : tf + ".burst",
            "a token bucket holds and refills at most "
                + Tier.MAX_BUCKET_TOKENS
                + " tokens per period");
      }
      long size = burst;
      check(periodNode, tf + ".period", () -> b.tier(new Tier(limit, period, size)));
      if (bucket) {
        // An empty bucket must fill within 100 years: its time in nanoseconds fits a long.
        check(
            periodNode,
            tf + ".period",
            () -> {
              if ((double) size * period.toMillis() / limit > MAX_BUCKET_FILL_MILLIS) {
                throw new IllegalArgumentException(
                    "a token bucket must fill within 100 years: burst × period ÷ rate is too long");
              }
              return size;
            });
      }
    }
  }

  /** The longest a token bucket may take to fill from empty: 100 years, as the algorithm takes. */
  private static final long MAX_BUCKET_FILL_MILLIS = 100L * 366 * 24 * 3600 * 1000;

  /** A concurrency rule: {@code concurrency: N} in place of tiers, and its {@code slotTtl}. */
  void concurrency(Map<String, Node> m, String f, Rule.Builder b) {
    for (String other : List.of("tiers", "algorithm", "sync", "staggerWindows")) {
      if (m.containsKey(other)) {
        throw error(
            m.get(other),
            f + "." + other,
            "a concurrency rule has no " + other + " (concurrency: N is its whole limit)");
      }
    }
    Node n = m.get("concurrency");
    long limit = limit(n, f + ".concurrency");
    Duration ttl = Rule.DEFAULT_SLOT_TTL;
    if (m.containsKey("slotTtl")) {
      String t = scalar(m.get("slotTtl"), f + ".slotTtl");
      ttl = Periods.read(t).orElse(null);
      if (ttl == null || ttl.isZero()) {
        throw error(m.get("slotTtl"), f + ".slotTtl", "bad period '" + t + "' (use e.g. 30s)");
      }
      atMostAYear(m.get("slotTtl"), f + ".slotTtl", ttl);
    }
    Duration slotTtl = ttl;
    check(n, f + ".concurrency", () -> b.concurrency(limit, slotTtl));
  }

  /** A sync interval ({@code 200ms}), or null for {@code off}. */
  Duration sync(Node node, String f) {
    String text = scalar(node, f).trim();
    if (text.equals("off")) {
      return null;
    }
    Duration d = Periods.read(text).orElse(null);
    if (d == null || d.isZero()) {
      throw error(node, f, "bad sync interval '" + text + "' (use e.g. 100ms, 200ms, 1s, or off)");
    }
    return atMostAYear(node, f, d);
  }

  int instances(Node node, String f) {
    String text = scalar(node, f).trim();
    if (text.equals("auto")) {
      return Sync.AUTO_INSTANCES;
    }
    try {
      int n = Integer.parseInt(text);
      if (n >= 1) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw error(node, f, "must be a whole number of at least 1, or auto: '" + text + "'");
  }

  /** A {@code path:NAME} key needs a {@code {NAME}} in the rule's path pattern. */
  void pathCaptures(Map<String, Node> rule, Node keyNode, String f, List<String> key) {
    Node match = rule.get("match");
    String pattern = null;
    if (match instanceof MappingNode mn) {
      for (NodeTuple t : mn.getValue()) {
        if (t.getKeyNode() instanceof ScalarNode k
            && k.getValue().equals("path")
            && t.getValueNode() instanceof ScalarNode v) {
          pattern = v.getValue();
        }
      }
    }
    for (int i = 0; i < key.size(); i++) {
      String k = key.get(i);
      if (k.regionMatches(true, 0, "path:", 0, 5)) {
        String name = k.substring(5).trim();
        if (pattern == null || !pattern.contains("{" + name + "}")) {
          Node at = keyNode instanceof SequenceNode sn ? sn.getValue().get(i) : keyNode;
          String field = keyNode instanceof SequenceNode ? f + ".key[" + i + "]" : f + ".key";
          throw error(
              at,
              field,
              "'"
                  + k
                  + "' names no {"
                  + name
                  + "} in the match path"
                  + (pattern == null ? " (the rule has no path pattern)" : " " + pattern));
        }
      }
    }
  }

  /**
   * An {@code app:NAME} key needs a key resolver registered as {@code NAME}, when the reader knows
   * which are.
   */
  private void resolvers(Node keyNode, String f, List<String> key) {
    if (resolvers == null) {
      return;
    }
    for (int i = 0; i < key.size(); i++) {
      String k = key.get(i);
      if (k.regionMatches(true, 0, "app:", 0, 4)) {
        String name = k.substring(4).trim();
        if (!resolvers.contains(name)) {
          Node at = keyNode instanceof SequenceNode sn ? sn.getValue().get(i) : keyNode;
          String field = keyNode instanceof SequenceNode ? f + "[" + i + "]" : f;
          throw error(
              at,
              field,
              "'"
                  + k
                  + "' names no key resolver the application registered"
                  + (resolvers.isEmpty()
                      ? " (it registered none)"
                      : " (it registered "
                          + String.join(", ", new java.util.TreeSet<>(resolvers))
                          + ")"));
        }
      }
    }
  }

  void match(Node node, String f, Rule.Builder b) {
    Map<String, Node> m = mapping(node, f, Set.of("methods", "path", "prefix"));
    if (m.containsKey("methods")) {
      b.methods(methods(m.get("methods"), f + ".methods"));
    }
    if (m.containsKey("path") && m.containsKey("prefix")) {
      throw error(node, f, "give path or prefix, not both");
    }
    if (m.containsKey("path")) {
      String p = scalar(m.get("path"), f + ".path");
      check(m.get("path"), f + ".path", () -> b.path(p));
    } else if (m.containsKey("prefix")) {
      String p = scalar(m.get("prefix"), f + ".prefix");
      check(m.get("prefix"), f + ".prefix", () -> b.pathPrefix(p));
    }
  }

  Algorithm algorithm(Node node, String f) {
    String v = scalar(node, f);
    return switch (v.toLowerCase(Locale.ROOT)) {
      case "sliding-window", "sliding" -> Algorithm.SLIDING_WINDOW;
      case "fixed-window", "fixed" -> Algorithm.FIXED_WINDOW;
      case "token-bucket" -> Algorithm.TOKEN_BUCKET;
      default ->
          throw error(
              node,
              f,
              "unknown algorithm '" + v + "' (use sliding-window, fixed-window or token-bucket)");
    };
  }

  OnStoreFailure onStoreFailure(Node node, String f) {
    String v = scalar(node, f);
    return switch (v) {
      case "allow" -> OnStoreFailure.ALLOW;
      case "reject" -> OnStoreFailure.REJECT;
      case "local" -> OnStoreFailure.LOCAL;
      default -> throw error(node, f, "unknown value '" + v + "' (use allow, reject or local)");
    };
  }

  List<String> keys(Node node, String f) {
    List<Node> items = node instanceof ScalarNode ? List.of(node) : sequence(node, f);
    if (items.isEmpty()) {
      throw error(node, f, "at least one key source is required");
    }
    List<String> out = new ArrayList<>();
    for (int i = 0; i < items.size(); i++) {
      String itemField = node instanceof ScalarNode ? f : f + "[" + i + "]";
      String v = scalar(items.get(i), itemField);
      check(items.get(i), itemField, () -> Rule.builder("check").key(v));
      out.add(v);
    }
    return out;
  }
}
