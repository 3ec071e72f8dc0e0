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

  Policy(String id, Algorithm algorithm, List<Tier> tiers, boolean failClosed, boolean shadow,
      boolean staggered, int denyCacheSize) {
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
    this.denyCache = shadow || denyCacheSize <= 0 ? null : new DenyCache(denyCacheSize);
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
