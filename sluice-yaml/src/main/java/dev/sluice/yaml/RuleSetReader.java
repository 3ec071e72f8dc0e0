package dev.sluice.yaml;

import dev.sluice.http.ForwardedHeader;
import dev.sluice.http.RateLimitHeaders;
import dev.sluice.http.Rule;
import dev.sluice.http.RuleSet;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.yaml.snakeyaml.nodes.Node;

/**
 * A rules file's top level: the header, proxy and kill-switch settings here, {@code defaults} and
 * {@code rules} by a {@link RuleReader}, {@code loadShedding} by a {@link SheddingReader}.
 */
final class RuleSetReader extends Fields {
  private final RuleReader rules;
  private final SheddingReader shedding;

  /** {@code resolvers}: the {@code app:} sources a key may name; null for any. */
  RuleSetReader(String file, Set<String> resolvers) {
    super(file);
    this.rules = new RuleReader(file, resolvers);
    this.shedding = new SheddingReader(file);
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
      b.shedding(shedding.shedding(top.get("loadShedding"), "loadShedding"));
    }
    if (top.containsKey("defaults")) {
      rules.defaults(top.get("defaults"));
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
    List<Node> items = sequence(rulesNode, "rules");
    Map<String, Integer> seen = new HashMap<>();
    for (int i = 0; i < items.size(); i++) {
      Rule r = rules.rule(items.get(i), "rules[" + i + "]");
      Integer before = seen.putIfAbsent(r.id(), i);
      if (before != null) {
        throw error(
            items.get(i),
            "rules[" + i + "].id",
            "duplicate rule id '" + r.id() + "' (also rules[" + before + "])");
      }
      b.rule(r);
    }
    return b.build();
  }
}
