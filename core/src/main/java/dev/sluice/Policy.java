package dev.sluice;

import java.util.List;

/** One limiter or rule as the engine sees it: immutable, shared by every thread. */
final class Policy {

  final String id;
  final Algorithm algorithm;
  final Tier[] tiers;
  final long[] periodMillis;
  final boolean failClosed;
  final boolean shadow;
  final boolean staggered;

  /** Null when the deny cache is off, and always for a shadow policy (it never rejects). */
  final DenyCache denyCache;

  Policy(
      String id,
      Algorithm algorithm,
      List<Tier> tiers,
      boolean failClosed,
      boolean shadow,
      boolean staggered,
      int denyCacheSize) {
    this(
        id,
        algorithm,
        tiers,
        failClosed,
        shadow,
        staggered,
        shadow || denyCacheSize <= 0 ? null : new DenyCache(denyCacheSize));
  }

  private Policy(
      String id,
      Algorithm algorithm,
      List<Tier> tiers,
      boolean failClosed,
      boolean shadow,
      boolean staggered,
      DenyCache denyCache) {
    this.id = id;
    this.algorithm = algorithm;
    this.tiers = tiers.toArray(new Tier[0]);
    this.periodMillis = new long[this.tiers.length];
    for (int i = 0; i < this.tiers.length; i++) {
      periodMillis[i] = this.tiers[i].periodMillis();
    }
    this.failClosed = failClosed;
    this.shadow = shadow;
    this.staggered = staggered && algorithm == Algorithm.FIXED_WINDOW;
    this.denyCache = denyCache;
  }

  /**
   * This policy with its first tier's limit set to {@code limit} and the others scaled by the same
   * ratio (rounded up, at least 1). It shares the counters (same id and periods), not the deny
   * cache.
   */
  Policy withFirstLimit(long limit) {
    double ratio = limit / (double) tiers[0].limit();
    List<Tier> scaled = new java.util.ArrayList<>(tiers.length);
    for (int i = 0; i < tiers.length; i++) {
      long l = i == 0 ? limit : Math.max(1, (long) Math.ceil(tiers[i].limit() * ratio));
      scaled.add(new Tier(l, tiers[i].period()));
    }
    // Its own deny cache: a denial under one limit says nothing about another.
    return new Policy(
        id,
        algorithm,
        scaled,
        failClosed,
        shadow,
        staggered,
        denyCache == null ? null : new DenyCache(denyCache.capacity()));
  }

  /**
   * Where this identity's windows of the given period begin, in [0, period): 0 unless boundaries
   * are staggered, then a hash of the identity, the same on every instance of a fleet.
   */
  long offset(String identity, long period) {
    if (!staggered) {
      return 0;
    }
    long h = identity.hashCode() * 0x9E3779B97F4A7C15L;
    return Math.floorMod(h ^ (h >>> 32), period);
  }
}
