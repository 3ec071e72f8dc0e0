package dev.sluice.http;

import dev.sluice.Algorithm;
import dev.sluice.engine.Policy;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;

/**
 * An enabled rule compiled for requests: its path pattern, methods and key sources, its policy, and
 * its policies for overridden quotas.
 */
final class ActiveRule {
  private static final int MAX_OVERRIDES = 1_024;
  final Rule rule;
  final Policy policy;
  final long firstLimit;
  final PathPattern pattern;
  final KeySource[] keySources;
  final Map<Long, Policy> overrides = new ConcurrentHashMap<>();

  ActiveRule(Rule rule, Policy policy) {
    this.rule = rule;
    this.policy = policy;
    this.firstLimit = policy.firstLimit();
    this.pattern = rule.pattern();
    this.keySources = rule.keySources().toArray(new KeySource[0]);
  }

  /** The identity the first key source that yields a value names, or null. */
  String identity(
      RequestInfo request,
      Map<String, String> captures,
      ClientAddress clients,
      Map<String, KeyResolver> apps) {
    for (KeySource s : keySources) {
      String v = s.resolve(request, captures, clients, apps);
      if (v != null) {
        return s.prefix() + v;
      }
    }
    return null;
  }

  boolean holdsSlots() {
    return rule.algorithm() == Algorithm.CONCURRENCY;
  }

  Policy policyFor(OptionalLong quota) {
    if (quota.isEmpty() || quota.getAsLong() == firstLimit) {
      return policy;
    }
    // A quota past the largest limit (a claim meaning "unlimited") is the largest limit.
    long q = Math.min(quota.getAsLong(), dev.sluice.Tier.MAX_LIMIT);
    if (q == firstLimit) {
      return policy;
    }
    Policy p = overrides.get(q);
    if (p == null) {
      p = policy.withFirstLimit(q);
      if (overrides.size() < MAX_OVERRIDES) {
        overrides.put(q, p);
      }
    }
    return p;
  }
}
