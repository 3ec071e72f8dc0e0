package dev.sluice.http;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Outcome;
import dev.sluice.StoreStatus;
import dev.sluice.engine.Policy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;

/**
 * Turns an {@link Outcome} (or a {@link Decision}) into what a client sees: the status, the
 * rate-limit headers and an RFC 9457 problem body. Shared by every adapter. Stateless.
 */
public final class RateLimitHeaders {

  /** Header families a response can carry. */
  public enum Family {
    /** {@code X-RateLimit-Limit}, {@code -Remaining}, {@code -Used}, {@code -Reset}. */
    X_RATELIMIT,
    /** The IETF httpapi draft's {@code RateLimit-Policy} and {@code RateLimit} fields. */
    IETF
  }

  /** How {@code X-RateLimit-Reset} is written. */
  public enum ResetFormat {
    /** Seconds from now, rounded up. */
    DELTA_SECONDS,
    /** The Unix time in seconds, rounded up. */
    EPOCH_SECONDS
  }

  /** Status of a request rejected because the client is over its limit. */
  public static final int TOO_MANY_REQUESTS = 429;

  /** Status of a request rejected because the store failed and its rule fails closed. */
  public static final int SERVICE_UNAVAILABLE = 503;

  public static final String PROBLEM_JSON = "application/problem+json";

  private RateLimitHeaders() {}

  /**
   * The status of a rejected decision: 429, or 503 when the store failed and the rule fails closed.
   */
  public static int status(Outcome d) {
    return d.storeStatus() == StoreStatus.FAILED_CLOSED || d.shed()
        ? SERVICE_UNAVAILABLE
        : TOO_MANY_REQUESTS;
  }

  /** {@link #status(Outcome)} of a decision. */
  public static int status(Decision d) {
    return status(d.outcome());
  }

  /**
   * The headers for a response, in order: the chosen families when the usage is known (not after a
   * store failure, unless local counters decided), and on a rejection {@code Retry-After} (whole
   * seconds, rounded up) and {@code Cache-Control: no-store}.
   *
   * <p>{@code X-RateLimit-*} describe the binding quota: on a refusal the limit that refused, else
   * the rate tier closest to its limit. When that is a concurrency limit, {@code Limit}, {@code
   * Remaining} and {@code Used} count requests in flight and there is no {@code Reset}. The IETF
   * fields name rate quotas only: a concurrency limit has no window and no reset, which every item
   * of theirs states.
   */
  public static List<Map.Entry<String, String>> of(
      Decision d, Set<Family> families, ResetFormat reset, long nowMillis) {
    List<Map.Entry<String, String>> out = new ArrayList<>(8);
    write(
        d.outcome(), families, reset, nowMillis, (name, value) -> out.add(Map.entry(name, value)));
    return out;
  }

  /**
   * Writes the headers of {@link #of(Decision, Set, ResetFormat, long)} for an outcome to {@code
   * out}, in order; nothing when no limit applied.
   */
  public static void write(
      Outcome d,
      Set<Family> families,
      ResetFormat reset,
      long nowMillis,
      BiConsumer<String, String> out) {
    if (!d.applied()) {
      return;
    }
    // A shadow rule never shows: when it is the binding quota, every quota is a shadow one. A load
    // shedder describes no client's quota.
    boolean counted = !d.storeFailed() || d.storeStatus() == StoreStatus.LOCAL;
    if (counted && !d.bindingShadow() && !d.shed()) {
      if (families.contains(Family.X_RATELIMIT)) {
        out.accept("X-RateLimit-Limit", limitText(d.limit()));
        out.accept("X-RateLimit-Remaining", decimal(d.remaining()));
        out.accept("X-RateLimit-Used", decimal(d.used()));
        // A concurrency limit's slots free when requests complete: there is no instant to name.
        if (d.algorithm() != Algorithm.CONCURRENCY) {
          long resetSeconds = Policy.ceilSeconds(d.resetAfterMillis());
          out.accept(
              "X-RateLimit-Reset",
              reset == ResetFormat.EPOCH_SECONDS
                  ? Long.toString(Policy.ceilSeconds(nowMillis + d.resetAfterMillis()))
                  : decimal(resetSeconds));
        }
      }
      if (families.contains(Family.IETF)) {
        String policy = d.ietfPolicy();
        if (!policy.isEmpty()) {
          out.accept("RateLimit-Policy", policy);
          out.accept("RateLimit", d.ietfState());
        }
      }
    }
    if (!d.allowed()) {
      out.accept("Retry-After", decimal(retrySeconds(d)));
      out.accept("Cache-Control", "no-store");
    }
  }

  /**
   * The decimal text of 0 to 1023: a window's seconds, and a small count, are written from here.
   */
  private static final String[] SMALL = new String[1024];

  static {
    for (int i = 0; i < SMALL.length; i++) {
      SMALL[i] = Integer.toString(i);
    }
  }

  /** A limit and its text, the last one written; immutable, so a racy read sees a whole pair. */
  private record LimitText(long limit, String text) {}

  private static LimitText lastLimit = new LimitText(0, "0");

  /** {@code n} in decimal, without formatting it again when it is small. */
  static String decimal(long n) {
    return n >= 0 && n < SMALL.length ? SMALL[(int) n] : Long.toString(n);
  }

  /**
   * A limit in decimal: a policy's limit is the same request after request, so the last one's text
   * is kept.
   */
  static String limitText(long limit) {
    if (limit >= 0 && limit < SMALL.length) {
      return SMALL[(int) limit];
    }
    LimitText last = lastLimit;
    if (last.limit() == limit) {
      return last.text();
    }
    String text = Long.toString(limit);
    lastLimit = new LimitText(limit, text);
    return text;
  }

  private static long retrySeconds(Outcome d) {
    return Math.max(1, Policy.ceilSeconds(d.retryAfterMillis()));
  }

  /**
   * The start of a 429's problem document: the problem type the RateLimit draft registers for a
   * client over its quota.
   */
  private static final String QUOTA_EXCEEDED =
      "{\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\","
          + "\"title\":\"Quota Exceeded\",\"status\":429";

  /**
   * The draft's {@code violated-policies} member: the binding quota's name as {@code
   * RateLimit-Policy} writes it (the rule id, with the period when the rule has several tiers).
   */
  private static String violated(Outcome d) {
    String id = d.policy();
    String withPeriod = id + "-" + d.tier().periodText();
    String name = d.ietfPolicy().contains("\"" + withPeriod + "\"") ? withPeriod : id;
    return ",\"violated-policies\":[\"" + json(name) + "\"]";
  }

  /** An RFC 9457 problem document for a rejected decision. */
  public static String problem(Decision d) {
    return problem(d.outcome());
  }

  /** An RFC 9457 problem document for a rejected outcome. */
  public static String problem(Outcome d) {
    long retry = retrySeconds(d);
    if (d.storeStatus() == StoreStatus.FAILED_CLOSED) {
      return "{\"type\":\"about:blank\",\"title\":\"Service Unavailable\",\"status\":503,"
          + "\"detail\":\"The rate limiter cannot count requests for policy "
          + json(d.policy())
          + " right now; retry later.\",\"policy\":\""
          + json(d.policy())
          + "\",\"retryAfter\":"
          + retry
          + "}";
    }
    if (d.shed()) {
      return "{\"type\":\"https://iana.org/assignments/http-problem-types#temporary-reduced-capacity\","
          + "\"title\":\"Temporary Reduced Capacity\",\"status\":503,"
          + "\"detail\":\"The service is shedding load to protect its most important requests; this "
          + json(d.priorityClass().isEmpty() ? "request" : d.priorityClass() + " request")
          + " was not served. Retry after "
          + retry
          + " s.\",\"priorityClass\":\""
          + json(d.priorityClass())
          + "\",\"shedder\":\""
          + json(
              d.policy().equals(dev.sluice.shedding.LoadShedder.WORKERS)
                  ? dev.sluice.shedding.LoadShedder.WORKERS
                  : dev.sluice.shedding.LoadShedder.FLEET)
          + "\",\"retryAfter\":"
          + retry
          + "}";
    }
    if (d.algorithm() == Algorithm.CONCURRENCY) {
      // No violated-policies: that member names RateLimit-Policy items, and a concurrency limit is
      // none.
      return QUOTA_EXCEEDED
          + ",\"detail\":\"Concurrency limit of "
          + d.limit()
          + " requests in flight reached for policy "
          + json(d.policy())
          + ": a slot frees when one of them completes. Retry after "
          + retry
          + " s, or send fewer requests at once.\",\"policy\":\""
          + json(d.policy())
          + "\",\"limitType\":\"concurrency\",\"concurrency\":"
          + d.limit()
          + ",\"retryAfter\":"
          + retry
          + "}";
    }
    if (d.algorithm() == Algorithm.TOKEN_BUCKET) {
      return QUOTA_EXCEEDED
          + violated(d)
          + ","
          + "\"detail\":\"Token bucket of "
          + d.limit()
          + " (refilled at "
          + d.tier().limit()
          + " per "
          + d.tier().periodText()
          + ") is empty for policy "
          + json(d.policy())
          + "; retry after "
          + retry
          + " s.\",\"policy\":\""
          + json(d.policy())
          + "\",\"limitType\":\"token-bucket\",\"limit\":"
          + d.tier().limit()
          + ",\"window\":"
          + seconds(d.tier().period())
          + ",\"burst\":"
          + d.limit()
          + ",\"retryAfter\":"
          + retry
          + "}";
    }
    return QUOTA_EXCEEDED
        + violated(d)
        + ","
        + "\"detail\":\"Rate limit of "
        + d.limit()
        + " per "
        + d.tier().periodText()
        + " exceeded for policy "
        + json(d.policy())
        + "; retry after "
        + retry
        + " s.\","
        + "\"policy\":\""
        + json(d.policy())
        + "\",\"limit\":"
        + d.limit()
        + ",\"window\":"
        + seconds(d.tier().period())
        + ",\"retryAfter\":"
        + retry
        + "}";
  }

  /** Rounds up to whole seconds. */
  static long seconds(Duration d) {
    return Policy.ceilSeconds(d.toMillis());
  }

  static String json(String s) {
    StringBuilder sb = new StringBuilder(s.length() + 8);
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        default -> {
          if (c < 0x20) {
            sb.append(String.format("\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
        }
      }
    }
    return sb.toString();
  }
}
