package dev.sluice.engine;

import dev.sluice.Algorithm;
import dev.sluice.OnStoreFailure;
import dev.sluice.Sync;
import dev.sluice.Tier;
import dev.sluice.algorithm.TierLimit;
import java.util.ArrayList;
import java.util.List;

/**
 * One limiter or rule as the {@link Engine} counts it: its id, algorithm, tiers and switches, with
 * each tier's algorithm and the policy's deny cache. Made by {@link Engine#policy}; immutable apart
 * from the deny cache, and shared by every thread.
 *
 * <p>Public only as a bridge to {@code dev.sluice.http} and {@code dev.sluice.control}; not for
 * applications.
 */
public final class Policy {

  final String id;
  final Algorithm algorithm;
  final Tier[] tiers;
  final TierLimit[] limits;
  final boolean failClosed;

  /** What a decision does when the store fails ({@link OnStoreFailure}). */
  final OnStoreFailure onStoreFailure;

  /**
   * With {@link OnStoreFailure#LOCAL}: this policy at its share of each limit, counted in this
   * instance's memory while the store fails; null otherwise.
   */
  final Policy local;

  final boolean shadow;
  final boolean staggered;

  /** Two-layer counting: the sync interval in ms, or 0 for a store call on every decision. */
  final long syncMillis;

  /**
   * Instances sharing the limit, for the local share while the store is down or two layers count
   * it; {@link Sync#AUTO_INSTANCES} for the fleet's live count ({@link #instances()}).
   */
  private final int instances;

  /** The fleet's live count, for {@link Sync#AUTO_INSTANCES}; null when no engine gave one. */
  private final FleetSize fleet;

  /** The local policy at the last live count, for {@link Sync#AUTO_INSTANCES}. */
  private volatile Policy autoLocal;

  private final Tier tightest;

  /** The most permits one request may ask for: the tightest tier's burst. */
  final long maxPermits;

  /** Null when the deny cache is off, and always for a shadow policy or a shedder. */
  final DenyCache denyCache;

  /**
   * What the store last said of this policy's tiers for identities a deny cache holds ({@link
   * Recall}), whatever policy's cache it is; null when deny caches are off.
   */
  final Recall recall;

  /** The deny cache size the engine gave this policy, for policies made from it. */
  private final int denyCacheSize;

  /**
   * Whether this is the fleet's load shedder ({@link Engine#shedder}): its refusal is a 503, and it
   * never describes a client's quota.
   */
  final boolean shedding;

  Policy(
      String id,
      Algorithm algorithm,
      List<Tier> tiers,
      boolean failClosed,
      boolean shadow,
      boolean staggered,
      int denyCacheSize,
      FleetSize fleet) {
    this(
        id,
        algorithm,
        tiers,
        failClosed ? OnStoreFailure.REJECT : OnStoreFailure.ALLOW,
        shadow,
        staggered,
        denyCacheSize,
        0,
        1,
        false,
        fleet);
  }

  private Policy(
      String id,
      Algorithm algorithm,
      List<Tier> tiers,
      OnStoreFailure onStoreFailure,
      boolean shadow,
      boolean staggered,
      int denyCacheSize,
      long syncMillis,
      int instances,
      boolean shedding,
      FleetSize fleet) {
    this.id = id;
    this.shedding = shedding;
    this.syncMillis = syncMillis;
    this.instances = instances;
    this.fleet = fleet;
    this.algorithm = algorithm;
    this.tiers = tiers.toArray(new Tier[0]);
    this.limits = new TierLimit[this.tiers.length];
    for (int i = 0; i < limits.length; i++) {
      limits[i] = Api.limit(algorithm, this.tiers[i], staggered);
    }
    this.onStoreFailure = onStoreFailure;
    this.failClosed = onStoreFailure == OnStoreFailure.REJECT;
    this.shadow = shadow;
    this.staggered = staggered;
    Tier t = this.tiers[0];
    for (Tier o : this.tiers) {
      if (o.burst() < t.burst()) {
        t = o;
      }
    }
    this.tightest = t;
    this.maxPermits = t.burst();
    this.denyCacheSize = denyCacheSize;
    this.denyCache = shadow || shedding || denyCacheSize <= 0 ? null : new DenyCache(denyCacheSize);
    this.recall = denyCacheSize <= 0 ? null : new Recall(denyCacheSize);
    this.local = onStoreFailure == OnStoreFailure.LOCAL ? localAt(instances()) : null;
  }

  /** This policy at its share for {@code n} instances, counted in memory, failing open. */
  private Policy localAt(int n) {
    return new Policy(
        id,
        algorithm,
        shares(this.tiers, n),
        OnStoreFailure.ALLOW,
        shadow,
        staggered,
        denyCacheSize,
        0,
        n,
        shedding,
        null);
  }

  /**
   * {@return how many instances share the limit now: the fleet's live count for {@link
   * Sync#AUTO_INSTANCES}, at least 1}
   */
  int instances() {
    return instances == Sync.AUTO_INSTANCES ? fleet.live() : instances;
  }

  /**
   * {@return with {@link OnStoreFailure#LOCAL}, this policy at its share of each limit now (for
   * {@link Sync#AUTO_INSTANCES}, at the fleet's live count), counted in this instance's memory;
   * null otherwise}
   */
  Policy localShare() {
    if (local == null || instances != Sync.AUTO_INSTANCES) {
      return local;
    }
    int n = fleet.live();
    Policy p = autoLocal;
    if (p == null || p.instances != n) {
      p = n == local.instances ? local : localAt(n);
      autoLocal = p;
    }
    return p;
  }

  /** Each tier at its share: limit and burst divided by {@code instances}, rounded up. */
  private static List<Tier> shares(Tier[] tiers, int instances) {
    List<Tier> out = new ArrayList<>(tiers.length);
    for (Tier t : tiers) {
      out.add(new Tier(share(t.limit(), instances), t.period(), share(t.burst(), instances)));
    }
    return out;
  }

  private static long share(long limit, int instances) {
    return -Math.floorDiv(-limit, instances);
  }

  /** {@return the first tier's limit: the one a quota or a {@code limit} knob replaces} */
  public long firstLimit() {
    return tiers[0].limit();
  }

  /**
   * This policy with its first tier's limit set to {@code limit} and the others scaled by the same
   * ratio (rounded up, at least 1). It shares the counters (same id and periods) and has its own
   * deny cache: a denial under one limit says nothing about another.
   */
  public Policy withFirstLimit(long limit) {
    double ratio = limit / (double) tiers[0].limit();
    List<Tier> scaled = new ArrayList<>(tiers.length);
    for (int i = 0; i < tiers.length; i++) {
      Tier t = tiers[i];
      long l = i == 0 ? limit : scale(t.limit(), ratio);
      long b = t.burst() == t.limit() ? l : scale(t.burst(), ratio);
      scaled.add(new Tier(l, t.period(), b));
    }
    return with(scaled, onStoreFailure, syncMillis, instances, shedding);
  }

  /** {@code n × ratio}, rounded up, from 1 to {@link Tier#MAX_LIMIT}. */
  private static long scale(long n, double ratio) {
    return (long) Math.min(Tier.MAX_LIMIT, Math.max(1, Math.ceil(n * ratio)));
  }

  /** This policy with other tiers or settings; it shares the counters, with its own deny cache. */
  private Policy with(
      List<Tier> tiers,
      OnStoreFailure onStoreFailure,
      long syncMillis,
      int instances,
      boolean shedding) {
    return new Policy(
        id,
        algorithm,
        tiers,
        onStoreFailure,
        shadow,
        staggered,
        denyCacheSize,
        syncMillis,
        instances,
        shedding,
        fleet);
  }

  /**
   * This policy with its store-failure setting: with {@link OnStoreFailure#LOCAL}, while the store
   * fails, each instance counts it in memory at {@code limit ÷ instances} (rounded up) per tier;
   * {@link Sync#AUTO_INSTANCES} follows the fleet's live count (a heartbeat in the store).
   *
   * @throws IllegalArgumentException if {@code instances} &lt; 1 and not {@link
   *     Sync#AUTO_INSTANCES}, or local limiting is asked of a policy counted in two layers (which
   *     limits locally at its share already)
   */
  public Policy withStoreFailure(OnStoreFailure onStoreFailure, int instances) {
    java.util.Objects.requireNonNull(onStoreFailure, "onStoreFailure");
    if (instances < 1 && instances != Sync.AUTO_INSTANCES) {
      throw new IllegalArgumentException("instances must be at least 1: " + instances);
    }
    startFleet(instances);
    if (onStoreFailure == OnStoreFailure.LOCAL && syncMillis > 0) {
      throw new IllegalArgumentException(
          "policy '" + id + "' is counted in two layers, which limit locally already");
    }
    return with(List.of(tiers), onStoreFailure, syncMillis, instances, shedding);
  }

  /**
   * This policy counted in two layers ({@link Sync}), or, for empty, with a store call on every
   * decision. It shares the counters and has its own deny cache.
   *
   * @throws IllegalStateException for a sync without the {@code sluice-twolayer} module
   */
  public Policy withSync(java.util.Optional<Sync> sync) {
    algorithm.checkSync(sync.isPresent());
    if (sync.isPresent() && TwoLayerModule.PROVIDER.isEmpty()) {
      throw new IllegalStateException(
          "policy '"
              + id
              + "' is counted in two layers (sync), which needs the dev.sluice:sluice-twolayer"
              + " module on the class or module path");
    }
    if (sync.isPresent() && onStoreFailure == OnStoreFailure.LOCAL) {
      throw new IllegalArgumentException(
          "policy '" + id + "' limits locally on a store failure, which two layers do already");
    }
    sync.ifPresent(s -> startFleet(s.instances()));
    return with(
        List.of(tiers),
        onStoreFailure,
        sync.map(s -> s.interval().toMillis()).orElse(0L),
        sync.map(Sync::instances).orElse(instances),
        shedding);
  }

  /** Starts the fleet's heartbeat when {@code instances} asks for the live count. */
  private void startFleet(int instances) {
    if (instances == Sync.AUTO_INSTANCES) {
      if (fleet == null) {
        throw new IllegalArgumentException(
            "policy '" + id + "' has no engine to count the fleet's instances");
      }
      fleet.start();
    }
  }

  /**
   * Each tier's name in the IETF fields and its {@code RateLimit-Policy} item, interleaved; built
   * on first use. Volatile so a thread that reads the array also reads its elements.
   */
  private volatile String[] ietfItems;

  String ietfName(int tier) {
    return ietfItems()[2 * tier];
  }

  String ietfItem(int tier) {
    return ietfItems()[2 * tier + 1];
  }

  /** Built once per policy, on first use: names and policy items, interleaved. */
  private String[] ietfItems() {
    String[] items = ietfItems;
    if (items == null) {
      items = new String[2 * tiers.length];
      for (int i = 0; i < tiers.length; i++) {
        items[2 * i] = IetfFields.name(id, tiers[i], tiers.length > 1);
        items[2 * i + 1] = IetfFields.item(items[2 * i], tiers[i]);
      }
      ietfItems = items;
    }
    return items;
  }

  /** Milliseconds rounded up to whole seconds, as every header states them. */
  public static long ceilSeconds(long millis) {
    return -Math.floorDiv(-millis, 1000);
  }

  /** This policy as the fleet's load shedder: refusals are 503s, and no deny cache. */
  Policy asShedding() {
    return new Policy(
        id,
        algorithm,
        List.of(tiers),
        onStoreFailure,
        shadow,
        staggered,
        denyCacheSize,
        syncMillis,
        instances,
        true,
        fleet);
  }

  /** The smallest limit of any tier. */
  Tier tightest() {
    return tightest;
  }
}
