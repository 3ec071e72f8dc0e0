package dev.sluice.engine;

import java.util.concurrent.ConcurrentHashMap;

/**
 * What the store last said of one policy's tiers for each identity that some deny cache holds, so
 * that a request the deny cache answers is told the same quotas, with the same figures, as one the
 * store answers. One per policy (when deny caches are on); its entries are made when a refusal is
 * remembered, for every policy the refused request applied to, and kept as long as that denial
 * lasts. While an identity is kept, every decision the store answers for it replaces its figures,
 * so they follow this instance's own admitted and refunded requests.
 *
 * <p>The figures are each tier's counts once the decision's refunds have landed ({@link
 * dev.sluice.algorithm.Count#settled}): a later decision reckons from them as from a store's answer
 * that counted nothing. Bounded: at most {@code capacity} identities; when full, expired ones are
 * swept (at most once per {@value DenyCache#SWEEP_INTERVAL_MILLIS} ms of the limiter's clock) and a
 * new one that still does not fit is not kept, which only costs its denials a store call. Figures
 * past their time are dropped by the first decision that meets them. The allow path reads one
 * volatile field while no kept identity's denial lasts. Thread-safe.
 */
final class Recall {

  /** One identity's figures: per tier, the window, its settled count and the previous window's. */
  static final class Figures {
    final long keepUntil;
    private final long[] counts;

    private Figures(long keepUntil, long[] counts) {
      this.keepUntil = keepUntil;
      this.counts = counts;
    }

    long window(int tier) {
      return counts[3 * tier];
    }

    long settled(int tier) {
      return counts[3 * tier + 1];
    }

    long previous(int tier) {
      return counts[3 * tier + 2];
    }
  }

  private final ConcurrentHashMap<String, Figures> figures = new ConcurrentHashMap<>();
  private final int capacity;

  /**
   * Until when (clock millis) some identity may be kept; 0 when none is. Written under the lock.
   */
  private volatile long watchUntil;

  private boolean swept;
  private long lastSweep;

  Recall(int capacity) {
    this.capacity = capacity;
  }

  /** The figures kept for {@code identity} at {@code now}, or null. */
  Figures get(String identity, long now) {
    if (now >= watchUntil) {
      return null;
    }
    Figures f = figures.get(identity);
    return f == null || f.keepUntil <= now ? null : f;
  }

  /**
   * Keeps the figures of {@code entry}'s counters in {@code call} until {@code keepUntil} (or
   * longer, if it was kept longer already), unless there is no room.
   */
  synchronized void keep(Call call, Entry entry, long keepUntil, long now) {
    Figures old = figures.get(entry.identity);
    long until = old == null ? keepUntil : Math.max(keepUntil, old.keepUntil);
    if (old == null && figures.size() >= capacity && !(sweep(now) && figures.size() < capacity)) {
      return;
    }
    figures.put(entry.identity, of(call, entry, until));
    if (until > watchUntil) {
      watchUntil = until;
    }
  }

  /**
   * Replaces the figures of {@code entry}'s identity with its counters in {@code call}, if kept.
   */
  void refresh(Call call, Entry entry, long now) {
    if (now >= watchUntil) {
      return;
    }
    Figures old = figures.get(entry.identity);
    if (old == null) {
      return;
    }
    if (old.keepUntil <= now) {
      // Its denial has lapsed: nothing answers from these figures again.
      figures.remove(entry.identity, old);
      return;
    }
    // Lost to a concurrent replacement or removal: a denial kept anew holds figures of its own.
    boolean unused = figures.replace(entry.identity, old, of(call, entry, old.keepUntil));
  }

  private static Figures of(Call call, Entry entry, long keepUntil) {
    int n = entry.policy.tiers.length;
    long[] counts = new long[3 * n];
    for (int t = 0; t < n; t++) {
      Counter c = call.counter(entry.firstCounter + t);
      counts[3 * t] = c.window;
      counts[3 * t + 1] = c.count.settled();
      counts[3 * t + 2] = c.previous;
    }
    return new Figures(keepUntil, counts);
  }

  /** Drops the expired figures, if no sweep ran lately; returns whether one ran. Under the lock. */
  private boolean sweep(long now) {
    if (swept && now - lastSweep < DenyCache.SWEEP_INTERVAL_MILLIS) {
      return false;
    }
    swept = true;
    lastSweep = now;
    figures.values().removeIf(f -> f.keepUntil <= now);
    long until = 0;
    for (Figures f : figures.values()) {
      until = Math.max(until, f.keepUntil);
    }
    watchUntil = until;
    return true;
  }

  synchronized int size() {
    return figures.size();
  }
}
