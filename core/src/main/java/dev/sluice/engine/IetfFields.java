package dev.sluice.engine;

import dev.sluice.Algorithm;
import dev.sluice.Quota;
import dev.sluice.Tier;
import java.util.List;

/**
 * The IETF httpapi draft's {@code RateLimit-Policy} and {@code RateLimit} fields of an {@link
 * Answer}: each tier's item is built once per policy ({@link Policy#ietfItem}), and the joined
 * policy field is kept while the same policies apply, so an outcome reused by one thread builds it
 * once. One per {@link Call}; one thread at a time.
 */
final class IetfFields {

  /** The policies and tiers whose {@code RateLimit-Policy} value was last built, and that value. */
  private Policy[] lastPolicies;

  private int[] lastTiers;
  private String lastPolicy;

  /**
   * The policy field of every counter of {@code call}, shadow policies, shedders and concurrency
   * rules left out.
   */
  String policy(Call call) {
    int n = call.size();
    boolean same = lastPolicies != null && lastPolicies.length == n;
    for (int i = 0; same && i < n; i++) {
      Counter c = call.counter(i);
      same = lastPolicies[i] == c.entry.policy && lastTiers[i] == c.tier;
    }
    if (same) {
      return lastPolicy;
    }
    Policy[] policies = new Policy[n];
    int[] tiers = new int[n];
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < n; i++) {
      Counter c = call.counter(i);
      policies[i] = c.entry.policy;
      tiers[i] = c.tier;
      if (isQuota(c.entry.policy)) {
        if (sb.length() > 0) {
          sb.append(", ");
        }
        sb.append(c.entry.policy.ietfItem(c.tier));
      }
    }
    lastPolicies = policies;
    lastTiers = tiers;
    lastPolicy = sb.toString();
    return lastPolicy;
  }

  /** The state field of every counter of {@code call} at {@code now}. */
  static String state(Call call, long now) {
    // An item is about 40 characters: room for every counter's, so the builder never grows.
    StringBuilder sb = new StringBuilder(48 * call.size());
    for (int i = 0; i < call.size(); i++) {
      Counter c = call.counter(i);
      Policy p = c.entry.policy;
      if (!isQuota(p)) {
        continue;
      }
      if (sb.length() > 0) {
        sb.append(", ");
      }
      long u = Math.max(0, c.count.used());
      state(
          sb,
          p.ietfName(c.tier),
          Math.max(0, c.tier().burst() - u),
          Math.max(0, c.count.resetAt() - now));
    }
    return sb.toString();
  }

  /**
   * Whether a policy is a quota the fields describe: a shadow policy limits nobody; the fleet's
   * shedder is no client's quota; a concurrency rule limits requests in flight, which the draft has
   * no unit for (no window, and no instant at which a slot is sure to free).
   */
  private static boolean isQuota(Policy p) {
    return !p.shadow && !p.shedding && p.algorithm != Algorithm.CONCURRENCY;
  }

  /**
   * Either field from quotas alone (a request too large to ever pass, with the binding quota),
   * {@code shedders} naming the policies to leave out.
   */
  static String fromQuotas(
      List<Quota> quotas, List<String> shedders, Algorithm algorithm, boolean policyField) {
    StringBuilder sb = new StringBuilder();
    for (Quota q : quotas) {
      if (q.shadow() || shedders.contains(q.policy()) || algorithm == Algorithm.CONCURRENCY) {
        continue;
      }
      int sameRule = 0;
      for (Quota o : quotas) {
        if (o.policy().equals(q.policy())) {
          sameRule++;
        }
      }
      String name = name(q.policy(), q.tier(), sameRule > 1);
      if (sb.length() > 0) {
        sb.append(", ");
      }
      if (policyField) {
        sb.append(item(name, q.tier()));
      } else {
        state(sb, name, q.remaining(), q.resetAfter().toMillis());
      }
    }
    return sb.toString();
  }

  /**
   * A tier's name in the IETF fields, as a structured-field string: the policy id, with the tier's
   * period when the policy has several tiers ({@code "get-product-10s"}).
   */
  static String name(String id, Tier tier, boolean severalTiers) {
    return "\"" + sfString(severalTiers ? id + "-" + tier.periodText() : id) + "\"";
  }

  /**
   * A tier's {@code RateLimit-Policy} item, {@code "name";q=quota;w=seconds}: a window's limit and
   * period, or a token bucket's burst and the time an empty bucket takes to fill (so that {@code q}
   * agrees with {@code X-RateLimit-Limit}).
   */
  static String item(String name, Tier tier) {
    long fillMillis =
        tier.burst() == tier.limit()
            ? tier.period().toMillis()
            : (long) Math.ceil((double) tier.burst() * tier.period().toMillis() / tier.limit());
    return name + ";q=" + tier.burst() + ";w=" + Policy.ceilSeconds(fillMillis);
  }

  /** Appends a tier's {@code RateLimit} item: {@code "name";r=remaining;t=seconds}. */
  private static void state(StringBuilder sb, String name, long remaining, long resetAfterMillis) {
    sb.append(name)
        .append(";r=")
        .append(remaining)
        .append(";t=")
        .append(Policy.ceilSeconds(resetAfterMillis));
  }

  /** Structured-field strings allow printable ASCII, with '"' and '\' escaped. */
  private static String sfString(String s) {
    StringBuilder sb = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\') {
        sb.append('\\').append(c);
      } else if (c >= 0x20 && c < 0x7f) {
        sb.append(c);
      } else {
        sb.append('?');
      }
    }
    return sb.toString();
  }
}
