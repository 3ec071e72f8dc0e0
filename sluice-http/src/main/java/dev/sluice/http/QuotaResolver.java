package dev.sluice.http;

import java.util.OptionalLong;

/**
 * A per-identity limit (for example a {@code quota} claim in the user's JWT). Returns the limit of
 * the rule's first tier for this request, or empty to keep the rule's own; the rule's other tiers
 * are scaled by the same ratio (rounded up, at least 1). Implementations are thread-safe and fast:
 * they run on every request.
 */
@FunctionalInterface
public interface QuotaResolver {

  /** Keeps every rule's limits. */
  QuotaResolver NONE = (request, rule) -> OptionalLong.empty();

  /** The limit of {@code rule}'s first tier for {@code request}, or empty to keep the rule's. */
  OptionalLong quota(RequestInfo request, Rule rule);

  /**
   * Reads the quota from a request attribute that another filter set (say, from a JWT claim): a
   * positive {@link Number}, or a string of digits. Anything else keeps the rule's limits.
   */
  static QuotaResolver attribute(String name) {
    return (request, rule) -> {
      Object v = request.attribute(name).orElse(null);
      long q;
      if (v instanceof Number n) {
        q = n.longValue();
      } else if (v instanceof String s
          && !s.isEmpty()
          && s.length() < 19
          && s.chars().allMatch(Character::isDigit)) {
        q = Long.parseLong(s);
      } else {
        return OptionalLong.empty();
      }
      return q > 0 ? OptionalLong.of(q) : OptionalLong.empty();
    };
  }
}
