package dev.sluice.yaml;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.http.ForwardedHeader;
import dev.sluice.http.RateLimitHeaders;
import dev.sluice.http.Rule;
import dev.sluice.http.RuleSet;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

class YamlRulesTest {

  static final String RULES_MD_EXAMPLE =
      """
      defaults:
        algorithm: sliding-window        # or fixed-window
        key: [user, header:X-Api-Key, ip]
        onStoreFailure: allow            # or reject
      headers: [x-ratelimit, ietf]       # which header families to emit
      trustedProxies: [127.0.0.1/32, 10.0.0.0/8]
      rules:
        - id: get-product
          match: { methods: [GET], path: "/v1/organizations/{orgId}/product/*" }
          key: [path:orgId]
          tiers:
            - { limit: 1000, period: 10s }
            - { limit: 50, period: 1s }
        - id: customer-wide
          match: { path: "/api/**" }
          key: [header:X-Customer-Id]
          tiers: [ { limit: 120, period: 1s } ]
          shadow: true                   # count and report, never reject (dark launch)
      """;

  @Test
  void theExampleOfDocsRulesMdReads() {
    RuleSet rules = YamlRules.parse(RULES_MD_EXAMPLE, "rules.yaml");
    assertEquals(List.of("127.0.0.1/32", "10.0.0.0/8"), rules.trustedProxies());
    assertEquals(Set.of(RateLimitHeaders.Family.values()), rules.headers());
    Rule product = rules.rule("get-product").orElseThrow();
    assertEquals(Set.of("GET"), product.methods());
    assertEquals(List.of("path:orgId"), product.key());
    assertEquals(Algorithm.SLIDING_WINDOW, product.algorithm());
    assertEquals(Duration.ofSeconds(10), product.tiers().get(0).period());
    assertEquals(50, product.tiers().get(1).limit());
    assertTrue(rules.rule("customer-wide").orElseThrow().shadow());
    assertFalse(rules.rule("customer-wide").orElseThrow().failClosed());
    assertTrue(rules.enabled());
    assertEquals(ForwardedHeader.X_FORWARDED_FOR, rules.forwardedHeader());
    assertEquals(64, rules.ipv6Prefix());
  }

  @Test
  void theForwardedHeaderAndIpv6PrefixAreRead() {
    RuleSet rules =
        YamlRules.parse("forwardedHeader: Forwarded\nipv6Prefix: 56\nrules: []\n", "rules.yaml");
    assertEquals(ForwardedHeader.FORWARDED, rules.forwardedHeader());
    assertEquals(56, rules.ipv6Prefix());
  }

  @Test
  void defaultsApplyToRulesThatDoNotSayOtherwise() {
    RuleSet rules =
        YamlRules.parse(
            """
        defaults: { algorithm: fixed-window, key: ip, onStoreFailure: reject }
        resetFormat: epoch
        rules:
          - { id: a, match: { prefix: /api }, tiers: [ { limit: 5, period: 1m } ] }
          - { id: b, algorithm: sliding-window, onStoreFailure: allow, tiers: [ { limit: 5, period: 500ms } ] }
        """,
            "r.yaml");
    assertEquals(Algorithm.FIXED_WINDOW, rules.rule("a").orElseThrow().algorithm());
    assertEquals(List.of("ip"), rules.rule("a").orElseThrow().key());
    assertTrue(rules.rule("a").orElseThrow().failClosed());
    assertTrue(rules.rule("a").orElseThrow().pathIsPrefix());
    assertEquals(Algorithm.SLIDING_WINDOW, rules.rule("b").orElseThrow().algorithm());
    assertFalse(rules.rule("b").orElseThrow().failClosed());
    assertEquals(Duration.ofMillis(500), rules.rule("b").orElseThrow().tiers().get(0).period());
    assertEquals(RateLimitHeaders.ResetFormat.EPOCH_SECONDS, rules.resetFormat());
  }

  @Test
  void syncCountsInTwoLayersPerRuleOrByDefault() {
    RuleSet rules =
        YamlRules.parse(
            """
            defaults: { sync: 200ms, instances: 3 }
            rules:
              - id: a
                tiers: [ { limit: 5, period: 1s } ]
              - id: b
                sync: 1s
                instances: 2
                tiers: [ { limit: 5, period: 1s } ]
              - id: c
                sync: off
                tiers: [ { limit: 5, period: 1s } ]
            """,
            "rules.yaml");
    assertEquals(
        Optional.of(new dev.sluice.Sync(Duration.ofMillis(200), 3)),
        rules.rule("a").orElseThrow().sync());
    assertEquals(
        Optional.of(new dev.sluice.Sync(Duration.ofSeconds(1), 2)),
        rules.rule("b").orElseThrow().sync());
    assertEquals(Optional.empty(), rules.rule("c").orElseThrow().sync());

    RulesException e = error(HEAD + "    sync: soon\n    tiers: [ { limit: 1, period: 1s } ]\n");
    assertEquals(
        "rules.yaml:3: rules[0].sync: bad sync interval 'soon' (use e.g. 100ms, 200ms, 1s, or off)",
        e.getMessage());
    e = error(HEAD + "    instances: 0\n    sync: 1s\n    tiers: [ { limit: 1, period: 1s } ]\n");
    assertEquals("rules[0].instances", e.field());
    e = error(HEAD + "    instances: 3\n    tiers: [ { limit: 1, period: 1s } ]\n");
    assertEquals(
        "rules.yaml:3: rules[0].instances: only means something with sync (e.g. sync: 200ms) or"
            + " onStoreFailure: local",
        e.getMessage());
  }

  @Test
  void instancesAutoFollowsTheFleetsLiveCount() {
    RuleSet rules =
        YamlRules.parse(
            """
            defaults: { onStoreFailure: local, instances: auto }
            rules:
              - { id: window, tiers: [ { limit: 10, period: 1s } ] }
              - { id: synced, onStoreFailure: allow, sync: 200ms, instances: auto,
                  tiers: [ { limit: 10, period: 1s } ] }
            """,
            "rules.yaml");
    assertEquals(dev.sluice.Sync.AUTO_INSTANCES, rules.rule("window").orElseThrow().instances());
    assertEquals(dev.sluice.Sync.AUTO_INSTANCES, rules.rule("synced").orElseThrow().instances());
    RulesException e =
        error(
            HEAD
                + "    instances: several\n    sync: 1s\n    tiers: [ { limit: 1, period: 1s } ]\n");
    assertEquals("rules[0].instances", e.field());
  }

  @Test
  void localOnStoreFailureTakesInstancesForEveryKindOfRule() {
    RuleSet rules =
        YamlRules.parse(
            """
            defaults: { onStoreFailure: local, instances: 3 }
            rules:
              - { id: window, tiers: [ { limit: 10, period: 1s } ] }
              - { id: bucket, algorithm: token-bucket, instances: 2,
                  tiers: [ { limit: 60, period: 1m, burst: 5 } ] }
              - { id: slots, concurrency: 2 }
              - { id: open, onStoreFailure: allow, tiers: [ { limit: 1, period: 1s } ] }
            """,
            "rules.yaml");
    Rule window = rules.rule("window").orElseThrow();
    assertEquals(dev.sluice.OnStoreFailure.LOCAL, window.onStoreFailure());
    assertEquals(3, window.instances());
    assertEquals(2, rules.rule("bucket").orElseThrow().instances());
    assertEquals(
        dev.sluice.OnStoreFailure.LOCAL, rules.rule("slots").orElseThrow().onStoreFailure());
    assertEquals(3, rules.rule("slots").orElseThrow().instances());
    assertEquals(
        dev.sluice.OnStoreFailure.ALLOW, rules.rule("open").orElseThrow().onStoreFailure());

    RulesException e =
        error(HEAD + "    onStoreFailure: locally\n    tiers: [ { limit: 1, period: 1s } ]\n");
    assertEquals(
        "rules.yaml:3: rules[0].onStoreFailure: unknown value 'locally' (use allow, reject or"
            + " local)",
        e.getMessage());
    e =
        error(
            HEAD
                + "    onStoreFailure: local\n    sync: 200ms\n"
                + "    tiers: [ { limit: 1, period: 1s } ]\n");
    assertEquals("rules[0]", e.field());
    assertTrue(e.getMessage().contains("already limits locally"), e.getMessage());
  }

  @Test
  void aConcurrencyRuleIsALimitOnRequestsInFlight() {
    RuleSet rules =
        YamlRules.parse(
            """
            defaults: { sync: 200ms }
            rules:
              - id: slow
                match: { prefix: /api/v1/slow }
                key: [header:X-Api-Key]
                concurrency: 2
              - id: slower
                concurrency: 1
                slotTtl: 2m
            """,
            "rules.yaml");
    Rule slow = rules.rule("slow").orElseThrow();
    assertEquals(dev.sluice.Algorithm.CONCURRENCY, slow.algorithm());
    assertEquals(List.of(new dev.sluice.Tier(2, Rule.DEFAULT_SLOT_TTL)), slow.tiers());
    assertEquals(Optional.empty(), slow.sync(), "the defaults' sync does not reach slots");
    assertEquals(Duration.ofMinutes(2), rules.rule("slower").orElseThrow().tiers().get(0).period());

    RulesException e =
        error(HEAD + "    concurrency: 2\n    tiers: [ { limit: 1, period: 1s } ]\n");
    assertEquals(
        "rules.yaml:4: rules[0].tiers: a concurrency rule has no tiers (concurrency: N is its whole"
            + " limit)",
        e.getMessage());
    assertEquals("rules[0].concurrency", error(HEAD + "    concurrency: 0\n").field());
    assertEquals("rules[0].slotTtl", error(HEAD + "    concurrency: 1\n    slotTtl: x\n").field());
    assertEquals(
        "rules[0].slotTtl",
        error(HEAD + "    slotTtl: 1s\n    tiers: [ { limit: 1, period: 1s } ]\n").field());
  }

  @Test
  void aTokenBucketRuleHasOneTierWithABurst() {
    RuleSet rules =
        YamlRules.parse(
            """
            defaults: { sync: 200ms }
            rules:
              - id: search
                algorithm: token-bucket
                tiers: [ { limit: 60, period: 1m, burst: 5 } ]
              - id: full
                algorithm: token-bucket
                tiers: [ { limit: 10, period: 1s } ]
            """,
            "rules.yaml");
    Rule search = rules.rule("search").orElseThrow();
    assertEquals(dev.sluice.Algorithm.TOKEN_BUCKET, search.algorithm());
    assertEquals(List.of(dev.sluice.Tier.of(60, Duration.ofMinutes(1), 5)), search.tiers());
    assertEquals(Optional.empty(), search.sync(), "the defaults' sync does not reach a bucket");
    assertEquals(10, rules.rule("full").orElseThrow().tiers().get(0).burst(), "burst = limit");

    String bucket = HEAD + "    algorithm: token-bucket\n";
    RulesException e = error(HEAD + "    tiers: [ { limit: 60, period: 1m, burst: 5 } ]\n");
    assertEquals(
        "rules.yaml:3: rules[0].tiers[0].burst: only means something with algorithm: token-bucket",
        e.getMessage());
    e =
        error(
            bucket
                + "    tiers:\n      - { limit: 60, period: 1m }\n      - { limit: 9, period: 1h }\n");
    assertEquals(6, e.line());
    assertEquals("rules[0].tiers[1]", e.field());
    assertEquals(
        "rules[0].tiers[0].burst",
        error(bucket + "    tiers: [ { limit: 60, period: 1m, burst: 0 } ]\n").field());
    assertEquals(
        "rules[0].tiers[0].limit",
        error(bucket + "    tiers: [ { limit: 2000000, period: 1s } ]\n").field());
    assertEquals(
        "rules[0].sync",
        error(bucket + "    sync: 1s\n    tiers: [ { limit: 60, period: 1m } ]\n").field());
  }

  private static RulesException error(String yaml) {
    return assertThrows(RulesException.class, () -> YamlRules.parse(yaml, "rules.yaml"));
  }

  private static final String HEAD = "rules:\n  - id: r\n";

  @Test
  void errorsNameTheFileLineAndField() {
    RulesException e =
        error(HEAD + "    algorithm: leaky-bucket\n    tiers: [ { limit: 1, period: 1s } ]\n");
    assertEquals(
        "rules.yaml:3: rules[0].algorithm: unknown algorithm 'leaky-bucket' (use sliding-window, fixed-window or token-bucket)",
        e.getMessage());
    assertEquals(3, e.line());
    assertEquals("rules[0].algorithm", e.field());

    e =
        error(
            HEAD
                + "    tiers:\n      - { limit: 5, period: 1s }\n      - { limit: 0, period: 1m }\n");
    assertEquals("rules.yaml:5: rules[0].tiers[1].limit: must be > 0 (was 0)", e.getMessage());

    e = error(HEAD + "    tiers: [ { limit: 5, period: 10 } ]\n");
    assertEquals(
        "rules.yaml:3: rules[0].tiers[0].period: bad period '10' (use e.g. 500ms, 10s, 5m, 1h, 1d)",
        e.getMessage());

    e =
        error(
            "trustedProxies:\n  - 10.0.0.0/8\n  - 10.0.0.0/40\n"
                + HEAD
                + "    tiers: [ { limit: 1, period: 1s } ]\n");
    assertEquals(3, e.line());
    assertEquals("trustedProxies[1]", e.field());
    assertTrue(e.getMessage().contains("bad CIDR '10.0.0.0/40'"), e.getMessage());

    e = error(HEAD + "    key: [ip, cookie:session]\n    tiers: [ { limit: 1, period: 1s } ]\n");
    assertEquals("rules[0].key[1]", e.field());
    assertEquals(3, e.line());
    assertTrue(e.getMessage().contains("unknown key source 'cookie:session'"), e.getMessage());

    e =
        error(
            HEAD
                + "    match: { path: \"/org/{orgId}/x\" }\n    key:\n      - ip\n      - path:tenant\n"
                + "    tiers: [ { limit: 1, period: 1s } ]\n");
    assertEquals(
        "rules.yaml:6: rules[0].key[1]: 'path:tenant' names no {tenant} in the match path /org/{orgId}/x",
        e.getMessage());

    e =
        error(
            HEAD
                + "    tiers:\n      - { limit: 5, period: 1s }\n      - { limit: 9, period: 1000ms }\n");
    assertEquals(
        "rules.yaml:5: rules[0].tiers[1].period: same period as rules[0].tiers[0] (one counter per period: "
            + "keep the smaller limit)",
        e.getMessage());

    e = error(HEAD + "    tiers: [ { limit: 5, period: 999999999999d } ]\n");
    assertEquals(
        "rules.yaml:3: rules[0].tiers[0].period: period must be at most 366d", e.getMessage());

    e = error("forwardedHeader: X-Real-IP\n" + HEAD + "    tiers: [ { limit: 1, period: 1s } ]\n");
    assertEquals(
        "rules.yaml:1: forwardedHeader: unknown header 'X-Real-IP' (use X-Forwarded-For or Forwarded)",
        e.getMessage());
    e = error("ipv6Prefix: 129\n" + HEAD + "    tiers: [ { limit: 1, period: 1s } ]\n");
    assertEquals("rules.yaml:1: ipv6Prefix: ipv6Prefix must be between 1 and 128", e.getMessage());

    e =
        error(
            HEAD
                + "    tiers: [ { limit: 1, period: 1s } ]\n  - id: r\n    tiers: [ { limit: 1, period: 1s } ]\n");
    assertEquals(
        "rules.yaml:4: rules[1].id: duplicate rule id 'r' (also rules[0])", e.getMessage());
  }

  @Test
  void structuralMistakesAreNamedToo() {
    assertEquals(
        "rules.yaml:3: rules[0].limit: unknown field (expected one of [algorithm, concurrency,"
            + " enabled, id, instances, key, match, onStoreFailure, shadow, slotTtl, staggerWindows,"
            + " sync, tiers])",
        error(HEAD + "    limit: 5\n    tiers: [ { limit: 1, period: 1s } ]\n").getMessage());
    assertEquals("rules.yaml:2: rules[0].tiers: missing", error(HEAD).getMessage());
    assertEquals(
        "rules[0].tiers[0].limit",
        error(HEAD + "    tiers: [ { limit: many, period: 1s } ]\n").field());
    assertEquals(
        "rules[0].match.path",
        error(HEAD + "    match: { path: api }\n    tiers: [ { limit: 1, period: 1s } ]\n")
            .field());
    assertEquals(
        "rules[0].shadow",
        error(HEAD + "    shadow: maybe\n    tiers: [ { limit: 1, period: 1s } ]\n").field());
    assertEquals("(syntax)", error("rules: [ { id: r, tiers: [ }").field());
    assertEquals("rules", error("").field());
    assertEquals(
        "rules[0].id",
        error(HEAD + "    id: again\n    tiers: [ { limit: 1, period: 1s } ]\n").field(),
        "a duplicated field");
  }
}
