package dev.sluice.rules;

import dev.sluice.Algorithm;
import dev.sluice.OnStoreFailure;
import dev.sluice.Sync;
import dev.sluice.Tier;
import dev.sluice.algorithm.WindowLimit;
import dev.sluice.http.ForwardedHeader;
import dev.sluice.http.PriorityClass;
import dev.sluice.http.RateLimitHeaders;
import dev.sluice.http.Rule;
import dev.sluice.http.RuleSet;
import dev.sluice.http.Shedding;
import java.io.IOException;
import java.io.InputStream;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;

/**
 * Reads a rules file (docs/RULES.md). Every error names the file, line and field:
 *
 * <pre>{@code
 * defaults: { algorithm: sliding-window, key: [user, ip], onStoreFailure: allow }
 * headers: [x-ratelimit, ietf]
 * resetFormat: delta            # or epoch
 * trustedProxies: [10.0.0.0/8]
 * forwardedHeader: X-Forwarded-For   # or Forwarded: the one header the trusted proxies set
 * ipv6Prefix: 64                # IPv6 clients are keyed by this many leading bits
 * enabled: true                 # false throws the kill switch
 * rules:
 *   - id: get-product
 *     match: { methods: [GET], path: "/v1/organizations/{orgId}/product/*" }   # or prefix: /api
 *     key: [path:orgId]
 *     tiers: [ { limit: 1000, period: 10s }, { limit: 50, period: 1s } ]
 *     shadow: false
 *     enabled: true
 * }</pre>
 *
 * Periods are a whole number with a unit: {@code ms}, {@code s}, {@code m}, {@code h} or {@code d}.
 * Stateless.
 */
public final class YamlRules {

  private static final Pattern PERIOD = Pattern.compile("(\\d{1,12})\\s*(ms|s|m|h|d)");

  private YamlRules() {}

  /**
   * Reads a rules file.
   *
   * @throws RulesException naming the line and field at fault
   * @throws UncheckedIOException if the file cannot be read
   */
  public static RuleSet load(Path file) {
    try {
      return parse(Files.readString(file, StandardCharsets.UTF_8), file.toString());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read rules file " + file + ": " + describe(e), e);
    }
  }

  /** An I/O problem in words: "no such file" rather than the bare path the JDK gives. */
  static String describe(IOException e) {
    if (e instanceof java.nio.file.NoSuchFileException) {
      return "no such file";
    }
    if (e instanceof java.nio.file.AccessDeniedException) {
      return "permission denied";
    }
    return e.getMessage() == null ? e.toString() : e.getMessage();
  }

  /** Reads rules from a class path resource such as {@code sluice-rules.yaml}. */
  public static RuleSet loadResource(String resource) {
    try (InputStream in = YamlRules.class.getClassLoader().getResourceAsStream(resource)) {
      if (in == null) {
        throw new UncheckedIOException(new IOException("no class path resource " + resource));
      }
      return parse(new String(in.readAllBytes(), StandardCharsets.UTF_8), resource);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Reads rules from text; {@code name} stands for the file in error messages.
   *
   * @throws RulesException naming the line and field at fault
   */
  public static RuleSet parse(String yaml, String name) {
    Node root;
    try {
      LoaderOptions options = new LoaderOptions();
      options.setAllowDuplicateKeys(false);
      options.setMaxAliasesForCollections(10);
      root = new Yaml(new SafeConstructor(options)).compose(new StringReader(yaml));
    } catch (MarkedYAMLException e) {
      int line = e.getProblemMark() == null ? 1 : e.getProblemMark().getLine() + 1;
      throw new RulesException(name, line, "(syntax)", e.getProblem());
    } catch (RuntimeException e) {
      throw new RulesException(name, 1, "(syntax)", String.valueOf(e.getMessage()));
    }
    if (root == null) {
      throw new RulesException(name, 1, "rules", "the file is empty");
    }
    return new Reader(name).ruleSet(root);
  }

  /** Parses {@code 10s}, {@code 5m}, {@code 1h}, {@code 500ms}, {@code 1d}; null if malformed. */
  static Duration period(String text) {
    Matcher m = PERIOD.matcher(text.trim());
    if (!m.matches()) {
      return null;
    }
    long n = Long.parseLong(m.group(1));
    return switch (m.group(2)) {
      case "ms" -> Duration.ofMillis(n);
      case "s" -> Duration.ofSeconds(n);
      case "m" -> Duration.ofMinutes(n);
      case "h" -> Duration.ofHours(n);
      default -> Duration.ofDays(n);
    };
  }

  /** Walks the node tree, keeping the path of the field it is in for error messages. */
  private static final class Reader {
    private final String file;
    private Algorithm defaultAlgorithm = Algorithm.SLIDING_WINDOW;
    private List<String> defaultKey = Rule.DEFAULT_KEY;
    private OnStoreFailure defaultOnStoreFailure = OnStoreFailure.ALLOW;

    /** {@code defaults.sync}: null for none. */
    private Duration defaultSync;

    private int defaultInstances = 1;

    Reader(String file) {
      this.file = file;
    }

    RuntimeException error(Node node, String field, String problem) {
      return new RulesException(file, node.getStartMark().getLine() + 1, field, problem);
    }

    RuleSet ruleSet(Node root) {
      Map<String, Node> top =
          mapping(
              root,
              "(top level)",
              Set.of(
                  "defaults",
                  "headers",
                  "resetFormat",
                  "trustedProxies",
                  "forwardedHeader",
                  "ipv6Prefix",
                  "enabled",
                  "loadShedding",
                  "rules"));
      RuleSet.Builder b = RuleSet.builder();
      if (top.containsKey("loadShedding")) {
        b.shedding(shedding(top.get("loadShedding"), "loadShedding"));
      }
      if (top.containsKey("defaults")) {
        defaults(top.get("defaults"));
      }
      if (top.containsKey("headers")) {
        Set<RateLimitHeaders.Family> families = EnumSet.noneOf(RateLimitHeaders.Family.class);
        List<Node> items = sequence(top.get("headers"), "headers");
        for (int i = 0; i < items.size(); i++) {
          String f = "headers[" + i + "]";
          String v = scalar(items.get(i), f).toLowerCase(Locale.ROOT);
          switch (v) {
            case "x-ratelimit" -> families.add(RateLimitHeaders.Family.X_RATELIMIT);
            case "ietf" -> families.add(RateLimitHeaders.Family.IETF);
            default ->
                throw error(
                    items.get(i), f, "unknown header family '" + v + "' (use x-ratelimit or ietf)");
          }
        }
        b.headers(families);
      }
      if (top.containsKey("resetFormat")) {
        Node n = top.get("resetFormat");
        String v = scalar(n, "resetFormat");
        b.resetFormat(
            switch (v) {
              case "delta" -> RateLimitHeaders.ResetFormat.DELTA_SECONDS;
              case "epoch" -> RateLimitHeaders.ResetFormat.EPOCH_SECONDS;
              default ->
                  throw error(
                      n, "resetFormat", "unknown reset format '" + v + "' (use delta or epoch)");
            });
      }
      if (top.containsKey("trustedProxies")) {
        List<Node> items = sequence(top.get("trustedProxies"), "trustedProxies");
        List<String> cidrs = new ArrayList<>();
        for (int i = 0; i < items.size(); i++) {
          String f = "trustedProxies[" + i + "]";
          String v = scalar(items.get(i), f);
          check(items.get(i), f, () -> RuleSet.builder().trustedProxies(List.of(v)));
          cidrs.add(v);
        }
        b.trustedProxies(cidrs);
      }
      if (top.containsKey("forwardedHeader")) {
        Node n = top.get("forwardedHeader");
        String v = scalar(n, "forwardedHeader");
        b.forwardedHeader(
            switch (v.toLowerCase(Locale.ROOT)) {
              case "x-forwarded-for" -> ForwardedHeader.X_FORWARDED_FOR;
              case "forwarded" -> ForwardedHeader.FORWARDED;
              default ->
                  throw error(
                      n,
                      "forwardedHeader",
                      "unknown header '" + v + "' (use X-Forwarded-For or Forwarded)");
            });
      }
      if (top.containsKey("ipv6Prefix")) {
        Node n = top.get("ipv6Prefix");
        String v = scalar(n, "ipv6Prefix");
        int bits;
        try {
          bits = Integer.parseInt(v.trim());
        } catch (NumberFormatException e) {
          throw error(n, "ipv6Prefix", "not a whole number: '" + v + "'");
        }
        check(n, "ipv6Prefix", () -> b.ipv6Prefix(bits));
      }
      if (top.containsKey("enabled")) {
        b.enabled(bool(top.get("enabled"), "enabled"));
      }
      Node rulesNode = top.get("rules");
      if (rulesNode == null) {
        throw error(
            root,
            "rules",
            "missing: a rules file needs a list of rules (it may be empty: rules: [])");
      }
      List<Node> rules = sequence(rulesNode, "rules");
      Map<String, Integer> seen = new HashMap<>();
      for (int i = 0; i < rules.size(); i++) {
        Rule r = rule(rules.get(i), "rules[" + i + "]");
        Integer before = seen.putIfAbsent(r.id(), i);
        if (before != null) {
          throw error(
              rules.get(i),
              "rules[" + i + "].id",
              "duplicate rule id '" + r.id() + "' (also rules[" + before + "])");
        }
        b.rule(r);
      }
      return b.build();
    }

    /**
     * {@code loadShedding}: {@code classes} (first match wins; Stripe's defaults when absent),
     * {@code fleet: { capacity, reserve, slotTtl }}, {@code workers: { threads | adaptive, delay,
     * ramp }}, and {@code retryAfter}.
     */
    Shedding shedding(Node node, String f) {
      Map<String, Node> m = mapping(node, f, Set.of("classes", "fleet", "workers", "retryAfter"));
      Shedding.Builder b = Shedding.builder();
      if (m.containsKey("classes")) {
        List<Node> items = sequence(m.get("classes"), f + ".classes");
        List<PriorityClass> classes = new ArrayList<>();
        for (int i = 0; i < items.size(); i++) {
          classes.add(priorityClass(items.get(i), f + ".classes[" + i + "]"));
        }
        check(m.get("classes"), f + ".classes", () -> b.classes(classes));
      }
      if (m.containsKey("fleet")) {
        String ff = f + ".fleet";
        Map<String, Node> fm =
            mapping(m.get("fleet"), ff, Set.of("capacity", "reserve", "slotTtl"));
        long capacity = wholeNumber(require(fm, m.get("fleet"), ff, "capacity"), ff + ".capacity");
        double reserve = 0.2;
        if (fm.containsKey("reserve")) {
          reserve = fraction(fm.get("reserve"), ff + ".reserve");
        }
        double r = reserve;
        check(m.get("fleet"), ff, () -> b.fleet(capacity, r));
        if (fm.containsKey("slotTtl")) {
          Duration ttl = duration(fm.get("slotTtl"), ff + ".slotTtl");
          check(fm.get("slotTtl"), ff + ".slotTtl", () -> b.slotTtl(ttl));
        }
      }
      if (m.containsKey("workers")) {
        String wf = f + ".workers";
        Map<String, Node> wm =
            mapping(m.get("workers"), wf, Set.of("threads", "adaptive", "delay", "ramp"));
        if (wm.containsKey("threads") == wm.containsKey("adaptive")) {
          throw error(m.get("workers"), wf, "give threads (a number) or adaptive, one of them");
        }
        if (wm.containsKey("threads")) {
          long t = wholeNumber(wm.get("threads"), wf + ".threads");
          check(wm.get("threads"), wf + ".threads", () -> b.workers((int) Math.min(t, 1 << 20)));
        } else {
          String a = scalar(wm.get("adaptive"), wf + ".adaptive");
          check(wm.get("adaptive"), wf + ".adaptive", () -> b.adaptive(a));
        }
        if (wm.containsKey("delay")) {
          Duration delay = duration(wm.get("delay"), wf + ".delay");
          check(wm.get("delay"), wf + ".delay", () -> b.delay(delay));
        }
        if (wm.containsKey("ramp")) {
          Duration ramp = duration(wm.get("ramp"), wf + ".ramp");
          check(wm.get("ramp"), wf + ".ramp", () -> b.ramp(ramp));
        }
      }
      if (m.containsKey("retryAfter")) {
        b.retryAfter(duration(m.get("retryAfter"), f + ".retryAfter"));
      }
      return b.build();
    }

    /**
     * One priority class: {@code { name, priority, match: { methods, path | prefix, headers } }}.
     */
    PriorityClass priorityClass(Node node, String f) {
      Map<String, Node> m = mapping(node, f, Set.of("name", "priority", "match"));
      String name = scalar(require(m, node, f, "name"), f + ".name");
      Node pn = require(m, node, f, "priority");
      String ptext = scalar(pn, f + ".priority").trim();
      int priority;
      if (ptext.equals("critical")) {
        priority = PriorityClass.CRITICAL;
      } else {
        try {
          priority = Integer.parseInt(ptext);
        } catch (NumberFormatException e) {
          throw error(pn, f + ".priority", "use critical (0) or a whole number: '" + ptext + "'");
        }
      }
      int p = priority;
      PriorityClass c = check(node, f, () -> PriorityClass.of(name, p));
      if (!m.containsKey("match")) {
        return c;
      }
      String mf = f + ".match";
      Node matchNode = m.get("match");
      Map<String, Node> mm = mapping(matchNode, mf, Set.of("methods", "path", "prefix", "headers"));
      if (mm.containsKey("methods")) {
        c = c.withMethods(methods(mm.get("methods"), mf + ".methods"));
      }
      if (mm.containsKey("path") && mm.containsKey("prefix")) {
        throw error(matchNode, mf, "give path or prefix, not both");
      }
      PriorityClass base = c;
      if (mm.containsKey("path")) {
        String v = scalar(mm.get("path"), mf + ".path");
        c = check(mm.get("path"), mf + ".path", () -> base.withPath(v));
      } else if (mm.containsKey("prefix")) {
        String v = scalar(mm.get("prefix"), mf + ".prefix");
        c = check(mm.get("prefix"), mf + ".prefix", () -> base.withPrefix(v));
      }
      if (mm.containsKey("headers")) {
        Node hn = mm.get("headers");
        if (!(hn instanceof MappingNode map)) {
          throw error(hn, mf + ".headers", "expected a mapping of header name to value");
        }
        for (NodeTuple t : map.getValue()) {
          String h = scalar(t.getKeyNode(), mf + ".headers");
          String v = scalar(t.getValueNode(), mf + ".headers." + h);
          c = c.withHeader(h, v);
        }
      }
      return c;
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

    /** A duration such as {@code 500ms}, {@code 28s} or {@code 2m}; 0 allowed. */
    Duration duration(Node node, String f) {
      String text = scalar(node, f).trim();
      Duration d = text.equals("0") ? Duration.ZERO : period(text);
      if (d == null) {
        throw error(node, f, "bad duration '" + text + "' (use e.g. 500ms, 28s, 2m)");
      }
      return d;
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
        long limit = wholeNumber(limitNode, tf + ".limit");
        Node periodNode = require(t, tiers.get(i), tf, "period");
        String periodText = scalar(periodNode, tf + ".period");
        Duration period = period(periodText);
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
          burst = wholeNumber(t.get("burst"), tf + ".burst");
        }
        if (bucket && Math.max(limit, burst) > WindowLimit.MAX_BUCKET_TOKENS) {
          throw error(
              limit > WindowLimit.MAX_BUCKET_TOKENS ? limitNode : t.get("burst"),
              limit > WindowLimit.MAX_BUCKET_TOKENS ? tf + ".limit" : tf + ".burst",
              "a token bucket holds and refills at most "
                  + WindowLimit.MAX_BUCKET_TOKENS
                  + " tokens per period");
        }
        long size = burst;
        check(periodNode, tf + ".period", () -> b.tier(new Tier(limit, period, size)));
      }
    }

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
      long limit = wholeNumber(n, f + ".concurrency");
      Duration ttl = Rule.DEFAULT_SLOT_TTL;
      if (m.containsKey("slotTtl")) {
        String t = scalar(m.get("slotTtl"), f + ".slotTtl");
        ttl = period(t);
        if (ttl == null || ttl.toMillis() < 1) {
          throw error(m.get("slotTtl"), f + ".slotTtl", "bad period '" + t + "' (use e.g. 30s)");
        }
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
      Duration d = period(text);
      if (d == null || d.toMillis() < 1) {
        throw error(
            node, f, "bad sync interval '" + text + "' (use e.g. 100ms, 200ms, 1s, or off)");
      }
      return d;
    }

    int instances(Node node, String f) {
      String text = scalar(node, f).trim();
      try {
        int n = Integer.parseInt(text);
        if (n >= 1) {
          return n;
        }
      } catch (NumberFormatException e) {
        // reported below
      }
      throw error(node, f, "must be a whole number of at least 1: '" + text + "'");
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

    boolean bool(Node node, String f) {
      String v = scalar(node, f);
      return switch (v) {
        case "true" -> true;
        case "false" -> false;
        default -> throw error(node, f, "expected true or false, was '" + v + "'");
      };
    }

    /** Runs a builder step, turning its IllegalArgumentException into a RulesException here. */
    <T> T check(Node node, String f, java.util.function.Supplier<T> step) {
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
      Map<String, Node> out = new java.util.LinkedHashMap<>();
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
              "unknown field (expected one of " + new java.util.TreeSet<>(allowed) + ")");
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
  }
}
