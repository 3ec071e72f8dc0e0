package dev.sluice;

import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterUpdate;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Arrays;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The decision path shared by every limiter and rule set: deny cache, one batched store call for
 * every (policy, tier) counter, the window arithmetic, refunds. Thread-safe and stateless apart
 * from the policies' deny caches.
 */
final class Evaluator {

  private static final Logger LOG = LoggerFactory.getLogger(Evaluator.class);
  private static final double EPSILON = 1e-9;

  /** Retry-After for a request that can never pass, or rejected because the store failed. */
  private static final long NEVER = -1;

  static final Duration FAIL_CLOSED_RETRY = Duration.ofSeconds(1);
  static final long WARN_INTERVAL_MILLIS = 10_000;

  private final CounterStore store;
  private final InstantSource clock;
  private final LogGate warnings = new LogGate(WARN_INTERVAL_MILLIS);
  private final LogGate errors = new LogGate(WARN_INTERVAL_MILLIS);

  Evaluator(CounterStore store, InstantSource clock) {
    this.store = store;
    this.clock = clock;
  }

  /** Decides for the first {@code n} policies, each counted against its identity. */
  Decision decide(Policy[] policies, String[] identities, int n, long permits) {
    if (permits <= 0) {
      throw new IllegalArgumentException("permits must be > 0");
    }
    long now = clock.millis();
    Decision oversized = oversized(policies, n, permits);
    if (oversized != null) {
      return oversized;
    }
    for (int i = 0; i < n; i++) {
      Policy p = policies[i];
      if (p.denyCache != null) {
        DenyCache.Denial d = p.denyCache.get(identities[i], now);
        if (d != null) {
          return denied(p, d, now);
        }
      }
    }

    if (n == 1 && policies[0].tiers.length == 1) {
      return decideOne(policies[0], identities[0], permits, now);
    }
    int total = 0;
    for (int i = 0; i < n; i++) {
      total += policies[i].tiers.length;
    }
    CounterUpdate[] updates = new CounterUpdate[total];
    long[] windowStart = new long[total];
    for (int i = 0, k = 0; i < n; i++) {
      Policy p = policies[i];
      for (int t = 0; t < p.tiers.length; t++, k++) {
        long period = p.periodMillis[t];
        long offset = p.offset(identities[i], period);
        long window = Math.floorDiv(now - offset, period);
        windowStart[k] = window * period + offset;
        updates[k] = new CounterUpdate(p.id, identities[i], period, window, permits);
      }
    }
    List<CounterUpdate> batch = Arrays.asList(updates);
    long[] counts;
    try {
      counts = increment(batch);
    } catch (RuntimeException e) {
      return storeFailed(policies, n, e);
    }

    Quota[] quotas = new Quota[total];
    long[] retry = new long[total];
    long[] settled = new long[total];
    boolean[] failed = new boolean[total];
    boolean[] shadowFailed = new boolean[n];
    boolean allowed = true;
    boolean shadowRejected = false;
    for (int i = 0, k = 0; i < n; i++) {
      Policy p = policies[i];
      for (int t = 0; t < p.tiers.length; t++, k++) {
        boolean pass =
            evaluate(
                p,
                t,
                windowStart[k],
                now,
                counts[2 * k],
                counts[2 * k + 1],
                permits,
                quotas,
                retry,
                settled,
                k);
        if (!pass) {
          failed[k] = true;
          if (p.shadow) {
            shadowRejected = true;
            shadowFailed[i] = true;
          } else {
            allowed = false;
          }
        }
      }
    }

    int binding = allowed ? leastRemaining(quotas) : latestRetry(quotas, failed, retry);
    Duration retryAfter = Duration.ZERO;
    if (allowed && shadowRejected) {
      // A shadow policy gives back what its enforcement would have given back; the others keep
      // theirs.
      refund(shadowUpdates(policies, n, shadowFailed, updates));
    }
    if (!allowed) {
      refund(batch);
      remember(policies, identities, n, windowStart, counts, settled, now, quotas, failed);
      long r = retry[binding];
      retryAfter = Duration.ofMillis(r == NEVER ? quotas[binding].tier().periodMillis() : r);
    }
    return new Decision(
        allowed,
        quotas[binding],
        List.of(quotas),
        retryAfter,
        StoreStatus.OK,
        shadowRejected,
        false);
  }

  /** The store's answer for a batch, checked for shape. */
  private long[] increment(List<CounterUpdate> batch) {
    long[] counts = store.increment(batch);
    if (counts == null || counts.length < 2 * batch.size()) {
      throw new IllegalStateException(
          "store returned "
              + (counts == null ? "null" : counts.length + " counts")
              + " for "
              + batch.size()
              + " counters");
    }
    return counts;
  }

  /** {@link #decide} for one policy of one tier, the common case, without the arrays. */
  private Decision decideOne(Policy p, String identity, long permits, long now) {
    long period = p.periodMillis[0];
    long offset = p.offset(identity, period);
    long window = Math.floorDiv(now - offset, period);
    long windowStart = window * period + offset;
    List<CounterUpdate> batch = List.of(new CounterUpdate(p.id, identity, period, window, permits));
    long[] counts;
    try {
      counts = increment(batch);
    } catch (RuntimeException e) {
      return storeFailed(new Policy[] {p}, 1, e);
    }
    Quota[] quota = new Quota[1];
    long[] retry = new long[1];
    long[] settled = new long[1];
    boolean pass =
        evaluate(p, 0, windowStart, now, counts[0], counts[1], permits, quota, retry, settled, 0);
    if (pass) {
      return new Decision(
          true, quota[0], List.of(quota[0]), Duration.ZERO, StoreStatus.OK, false, false);
    }
    refund(batch);
    if (p.shadow) {
      return new Decision(
          true, quota[0], List.of(quota[0]), Duration.ZERO, StoreStatus.OK, true, false);
    }
    remember(
        new Policy[] {p},
        new String[] {identity},
        1,
        new long[] {windowStart},
        counts,
        settled,
        now,
        quota,
        new boolean[] {true});
    long r = retry[0];
    return new Decision(
        false,
        quota[0],
        List.of(quota[0]),
        Duration.ofMillis(r == NEVER ? period : r),
        StoreStatus.OK,
        false,
        false);
  }

  /**
   * Fills quota {@code k} and {@code retry[k]} (time until {@code permits} could pass, for a
   * failing tier) and returns whether the tier lets the request through.
   */
  private static boolean evaluate(
      Policy p,
      int t,
      long windowStart,
      long now,
      long current,
      long previous,
      long permits,
      Quota[] quotas,
      long[] retry,
      long[] settled,
      int k) {
    Tier tier = p.tiers[t];
    long limit = tier.limit();
    long period = p.periodMillis[t];
    long windowEnd = windowStart + period;
    boolean pass;
    long used;
    long resetAt;
    // A rejected request's count includes other requests rejected at the same moment, whose refunds
    // are on their way: every request past the limit is refunded, so the window settles at most at
    // the count the limit lets through. Reckoning from that, not from the inflated count, keeps a
    // burst of concurrent rejections from stretching Retry-After and the deny cache.
    if (p.algorithm == Algorithm.FIXED_WINDOW) {
      pass = current <= limit;
      used = pass ? current : Math.min(current - permits, limit);
      settled[k] = used;
      resetAt = windowEnd;
      retry[k] = pass ? 0 : atLeastOne(fixedRetry(limit, used, permits, windowEnd, now));
    } else {
      double f = (now - windowStart) / (double) period;
      double decayed = previous * (1 - f);
      double estimate = decayed + current;
      pass = estimate <= limit + EPSILON;
      long after =
          pass
              ? current
              : Math.min(
                  current - permits, Math.max(0, (long) Math.floor(limit - decayed + EPSILON)));
      settled[k] = after;
      used = (long) Math.ceil(decayed + after - EPSILON);
      resetAt = after > 0 ? windowEnd + period : previous > 0 ? windowEnd : now;
      retry[k] =
          pass
              ? 0
              : atLeastOne(slidingRetry(limit, after, previous, permits, windowStart, period, now));
    }
    quotas[k] =
        new Quota(
            p.id,
            tier,
            Math.max(0, used),
            Math.max(0, limit - used),
            Duration.ofMillis(Math.max(0, resetAt - now)),
            p.shadow,
            !pass);
    return pass;
  }

  private static long atLeastOne(long retry) {
    return retry == NEVER ? NEVER : Math.max(1, retry);
  }

  /** Milliseconds until {@code q} permits fit a fixed window now holding {@code current}. */
  static long fixedRetry(long limit, long current, long q, long windowEnd, long now) {
    if (q > limit) {
      return NEVER;
    }
    return current + q <= limit ? 0 : windowEnd - now;
  }

  /**
   * Milliseconds until {@code q} permits fit a sliding window whose current window holds {@code
   * current} and previous {@code previous}, if nothing else arrives: the earliest instant at which
   * {@code previous × (1 − f) + current + q ≤ limit}, looking into the next window when the current
   * one alone is too full.
   */
  static long slidingRetry(
      long limit, long current, long previous, long q, long windowStart, long period, long now) {
    if (q > limit) {
      return NEVER;
    }
    long at;
    if (current + q <= limit) {
      if (previous == 0) {
        return 0;
      }
      double f = 1 - (limit - current - q) / (double) previous;
      at = windowStart + (long) Math.ceil(f * period - 1e-7);
    } else {
      // Next window: this one's count becomes the previous, decaying from its start.
      double g = 1 - (limit - q) / (double) current;
      at = windowStart + period + (long) Math.ceil(g * period - 1e-7);
    }
    return Math.max(0, at - now);
  }

  private static int leastRemaining(Quota[] quotas) {
    int best = -1;
    for (int k = 0; k < quotas.length; k++) {
      Quota q = quotas[k];
      if (best < 0
          || (quotas[best].shadow() && !q.shadow())
          || (q.shadow() == quotas[best].shadow() && q.remaining() < quotas[best].remaining())) {
        best = k;
      }
    }
    return best;
  }

  /** The failing, non-shadow tier that frees last. */
  private static int latestRetry(Quota[] quotas, boolean[] failed, long[] retry) {
    int best = -1;
    for (int k = 0; k < quotas.length; k++) {
      if (failed[k]
          && !quotas[k].shadow()
          && (best < 0 || unsigned(retry[k]) > unsigned(retry[best]))) {
        best = k;
      }
    }
    return best;
  }

  private static long unsigned(long retry) {
    return retry == NEVER ? Long.MAX_VALUE : retry;
  }

  private void refund(List<CounterUpdate> batch) {
    try {
      store
          .decrementAsync(batch)
          .whenComplete(
              (v, e) -> {
                if (e != null) {
                  LOG.debug("refund failed", e);
                }
              });
    } catch (RuntimeException e) {
      LOG.debug("refund failed", e);
    }
  }

  /** Puts each failing policy's identity in its deny cache until one permit could pass. */
  private static void remember(
      Policy[] policies,
      String[] identities,
      int n,
      long[] windowStart,
      long[] counts,
      long[] settled,
      long now,
      Quota[] quotas,
      boolean[] failed) {
    for (int i = 0, k = 0; i < n; i++) {
      Policy p = policies[i];
      int first = k;
      k += p.tiers.length;
      if (p.denyCache == null) {
        continue;
      }
      long until = 0;
      int worst = -1;
      for (int j = first; j < k; j++) {
        if (!failed[j]) {
          continue;
        }
        int t = j - first;
        long period = p.periodMillis[t];
        long limit = p.tiers[t].limit();
        long after = settled[j];
        long one =
            p.algorithm == Algorithm.FIXED_WINDOW
                ? fixedRetry(limit, after, 1, windowStart[j] + period, now)
                : slidingRetry(limit, after, counts[2 * j + 1], 1, windowStart[j], period, now);
        if (one > 0 && now + one > until) {
          until = now + one;
          worst = j;
        }
      }
      if (worst >= 0) {
        Quota q = quotas[worst];
        p.denyCache.put(
            identities[i],
            new DenyCache.Denial(until, worst - first, q.used(), now + q.resetAfter().toMillis()),
            now);
      }
    }
  }

  /**
   * A rejection, before any store call, when {@code permits} exceed a tier's limit: such a request
   * can never pass, and counting it could only overflow. Null when every tier can hold it.
   */
  private static Decision oversized(Policy[] policies, int n, long permits) {
    Policy worst = null;
    Tier tier = null;
    for (int i = 0; i < n; i++) {
      Policy p = policies[i];
      for (Tier t : p.tiers) {
        if (!p.shadow && permits > t.limit() && (tier == null || t.limit() < tier.limit())) {
          worst = p;
          tier = t;
        }
      }
    }
    if (tier == null) {
      return null;
    }
    Quota q = new Quota(worst.id, tier, 0, tier.limit(), Duration.ZERO, false, true);
    return new Decision(false, q, List.of(q), tier.period(), StoreStatus.OK, false, false);
  }

  /** The updates of the shadow policies that would have rejected, to give back. */
  private static List<CounterUpdate> shadowUpdates(
      Policy[] policies, int n, boolean[] shadowFailed, CounterUpdate[] updates) {
    List<CounterUpdate> out = new java.util.ArrayList<>();
    for (int i = 0, k = 0; i < n; i++) {
      for (int t = 0; t < policies[i].tiers.length; t++, k++) {
        if (shadowFailed[i]) {
          out.add(updates[k]);
        }
      }
    }
    return out;
  }

  private static Decision denied(Policy p, DenyCache.Denial d, long now) {
    Tier tier = p.tiers[d.tier()];
    Quota q =
        new Quota(
            p.id,
            tier,
            d.used(),
            Math.max(0, tier.limit() - d.used()),
            Duration.ofMillis(Math.max(0, d.resetAtMillis() - now)),
            false,
            true);
    return new Decision(
        false,
        q,
        List.of(q),
        Duration.ofMillis(d.untilMillis() - now),
        StoreStatus.OK,
        false,
        true);
  }

  private Decision storeFailed(Policy[] policies, int n, RuntimeException e) {
    if (warnings.tryAcquire(clock.millis())) {
      LOG.warn(
          "counter store failed; deciding without it (warned at most every {} s): {}",
          WARN_INTERVAL_MILLIS / 1000,
          e.toString());
    } else {
      LOG.debug("counter store failed", e);
    }
    return withoutCounts(policies, n);
  }

  /**
   * The decision when the limiter itself failed (a key source or quota resolver that threw, a bug):
   * the same as a store failure, so it is never an error response. Logged with its stack trace at
   * most every {@value #WARN_INTERVAL_MILLIS} ms.
   */
  Decision failed(Policy[] policies, int n, RuntimeException e) {
    if (errors.tryAcquire(clock.millis())) {
      LOG.error(
          "rate limiter failed; the request is decided as on a store failure (logged at most every {} s)",
          WARN_INTERVAL_MILLIS / 1000,
          e);
    } else {
      LOG.debug("rate limiter failed", e);
    }
    return withoutCounts(policies, n);
  }

  /** Fails closed when a non-shadow policy asks for it, else open. */
  private static Decision withoutCounts(Policy[] policies, int n) {
    Policy binding = null;
    for (int i = 0; i < n; i++) {
      Policy p = policies[i];
      if (!p.shadow && (binding == null || (p.failClosed && !binding.failClosed))) {
        binding = p;
      }
    }
    if (binding == null) {
      binding = policies[0];
    }
    boolean closed = binding.failClosed && !binding.shadow;
    Tier tier = binding.tiers[0];
    Quota q = new Quota(binding.id, tier, 0, tier.limit(), tier.period(), binding.shadow, closed);
    return new Decision(
        !closed,
        q,
        List.of(),
        closed ? FAIL_CLOSED_RETRY : Duration.ZERO,
        closed ? StoreStatus.FAILED_CLOSED : StoreStatus.FAILED_OPEN,
        false,
        false);
  }
}
