package dev.sluice.http;

import dev.sluice.Algorithm;
import dev.sluice.OnStoreFailure;
import dev.sluice.Sync;
import dev.sluice.Tier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * One rate limit of a {@link RuleSet}: which requests it matches (methods and a path pattern or
 * prefix), whom it counts (the first key source that yields a value), and its tiers, all of which
 * must pass. A request no key source identifies is not limited by the rule. Immutable; built with
 * {@link #builder(String)}.
 */
public final class Rule {

  /**
   * The key sources a rule uses unless told otherwise: nothing a client can invent. A header is a
   * key only where a rule names it, which is safe once an authentication filter has validated it.
   */
  public static final List<String> DEFAULT_KEY = List.of("user", "ip");

  /**
   * A concurrency rule's slot time to live unless told otherwise: a request is counted for at least
   * this long, and a slot never given back returns within twice this.
   */
  public static final Duration DEFAULT_SLOT_TTL = Duration.ofSeconds(30);

  private final String id;
  private final Set<String> methods;
  private final String path;
  private final boolean pathIsPrefix;
  private final List<String> key;
  private final Algorithm algorithm;
  private final List<Tier> tiers;
  private final boolean shadow;
  private final boolean enabled;
  private final OnStoreFailure onStoreFailure;
  private final int instances;
  private final boolean staggerWindows;
  private final Sync sync;

  private Rule(Builder b) {
    this.id = b.id;
    this.methods = Set.copyOf(b.methods);
    this.path = b.path;
    this.pathIsPrefix = b.prefix;
    this.key = List.copyOf(b.key);
    this.algorithm = b.algorithm;
    this.tiers = List.copyOf(b.tiers);
    this.shadow = b.shadow;
    this.enabled = b.enabled;
    this.onStoreFailure = b.onStoreFailure;
    this.instances = b.sync != null ? b.sync.instances() : b.instances;
    this.staggerWindows = b.staggerWindows;
    this.sync = b.sync;
  }

  /** A builder of a rule named {@code id}: unique in its rule set, part of every counter's key. */
  public static Builder builder(String id) {
    return new Builder(id);
  }

  /** {@return a builder holding this rule's settings, to derive a changed copy} */
  public Builder toBuilder() {
    Builder b =
        new Builder(id)
            .methods(methods.toArray(new String[0]))
            .key(key.toArray(new String[0]))
            .algorithm(algorithm)
            .shadow(shadow)
            .enabled(enabled)
            .onStoreFailure(onStoreFailure)
            .staggerWindows(staggerWindows);
    b.sync = sync;
    b.instances = instances;
    b.path = path;
    b.prefix = pathIsPrefix;
    tiers.forEach(b::tier);
    return b;
  }

  public String id() {
    return id;
  }

  /** {@return the methods it matches, upper case; empty for every method} */
  public Set<String> methods() {
    return methods;
  }

  /**
   * Whether {@code methods} (upper case; empty for every method) cover this upper-case method; GET
   * covers HEAD, which JAX-RS and servlets serve with GET.
   */
  static boolean covers(Set<String> methods, String method) {
    return methods.isEmpty()
        || methods.contains(method)
        || (method.equals("HEAD") && methods.contains("GET"));
  }

  /** {@return the path pattern or prefix it matches} */
  public String path() {
    return path;
  }

  public boolean pathIsPrefix() {
    return pathIsPrefix;
  }

  public List<String> key() {
    return key;
  }

  public Algorithm algorithm() {
    return algorithm;
  }

  public List<Tier> tiers() {
    return tiers;
  }

  /** Counts and reports, never rejects (a dark launch). */
  public boolean shadow() {
    return shadow;
  }

  public boolean enabled() {
    return enabled;
  }

  /** Rejects when the store fails (the default is to allow). */
  public boolean failClosed() {
    return onStoreFailure == OnStoreFailure.REJECT;
  }

  /**
   * {@return what a request gets when the store fails or times out ({@link OnStoreFailure#ALLOW})}
   */
  public OnStoreFailure onStoreFailure() {
    return onStoreFailure;
  }

  /**
   * How many instances share the rule's limits: each one's share while the store fails ({@link
   * OnStoreFailure#LOCAL}, or two-layer counting), {@code limit ÷ instances}. 1 unless set; {@link
   * Sync#AUTO_INSTANCES} for the fleet's live count.
   */
  public int instances() {
    return instances;
  }

  public boolean staggerWindows() {
    return staggerWindows;
  }

  /** Two-layer counting, or empty when every decision goes to the store. */
  public Optional<Sync> sync() {
    return Optional.ofNullable(sync);
  }

  /** Its path pattern, compiled. */
  PathPattern pattern() {
    return pathIsPrefix ? PathPattern.prefix(path) : PathPattern.pattern(path);
  }

  /** Its key sources, parsed. */
  List<KeySource> keySources() {
    return RuleChecks.keySources(key, pattern(), path);
  }

  @Override
  public String toString() {
    return id
        + ": "
        + (methods.isEmpty() ? "*" : String.join(",", methods))
        + " "
        + (pathIsPrefix ? path + " (prefix)" : path)
        + " by "
        + key
        + " "
        + algorithm.name().toLowerCase(Locale.ROOT).replace('_', '-')
        + " "
        + tiers
        + (shadow ? " shadow" : "")
        + (sync == null
            ? ""
            : " synced every " + sync.interval().toMillis() + " ms by " + count(sync.instances()))
        + (enabled ? "" : " disabled")
        + (onStoreFailure == OnStoreFailure.REJECT ? " fail-closed" : "")
        + (onStoreFailure == OnStoreFailure.LOCAL
            ? " local on failure by " + count(instances)
            : "");
  }

  private static String count(int instances) {
    return instances == Sync.AUTO_INSTANCES ? "auto" : String.valueOf(instances);
  }

  /** Configures a {@link Rule}; validates each value when it is set. */
  public static final class Builder {
    private final String id;
    private final Set<String> methods = new LinkedHashSet<>();
    private String path = "/**";
    private boolean prefix;
    private List<String> key = DEFAULT_KEY;
    private Algorithm algorithm = Algorithm.SLIDING_WINDOW;
    private final List<Tier> tiers = new ArrayList<>();
    private boolean shadow;
    private boolean enabled = true;
    private OnStoreFailure onStoreFailure = OnStoreFailure.ALLOW;
    private int instances = 1;
    private boolean staggerWindows;
    private Sync sync;

    private Builder(String id) {
      this.id = RuleChecks.id(id);
    }

    /**
     * Matches only these methods (any case); none given means every method. GET covers HEAD too.
     */
    public Builder methods(String... methods) {
      this.methods.clear();
      for (String m : methods) {
        if (m == null || m.isBlank()) {
          throw new IllegalArgumentException("methods: empty method");
        }
        this.methods.add(m.trim().toUpperCase(Locale.ROOT));
      }
      return this;
    }

    /**
     * Matches a pattern: {@code *} one segment, {@code **} any, {@code {name}} a captured segment.
     */
    public Builder path(String pattern) {
      PathPattern.pattern(pattern);
      this.path = pattern;
      this.prefix = false;
      return this;
    }

    /** Matches a prefix and everything below it. */
    public Builder pathPrefix(String prefix) {
      PathPattern.prefix(prefix);
      this.path = prefix;
      this.prefix = true;
      return this;
    }

    /** Key sources in order; the first that yields a value names the identity. */
    public Builder key(String... sources) {
      if (sources.length == 0) {
        throw new IllegalArgumentException("key: at least one key source is required");
      }
      for (String s : sources) {
        KeySource.parse(s);
      }
      this.key = List.of(sources);
      return this;
    }

    public Builder algorithm(Algorithm algorithm) {
      this.algorithm = Objects.requireNonNull(algorithm, "algorithm");
      return this;
    }

    public Builder tier(long limit, Duration period) {
      return tier(new Tier(limit, period));
    }

    public Builder tier(Tier tier) {
      tiers.add(Objects.requireNonNull(tier, "tier"));
      return this;
    }

    public Builder shadow(boolean shadow) {
      this.shadow = shadow;
      return this;
    }

    public Builder enabled(boolean enabled) {
      this.enabled = enabled;
      return this;
    }

    /** {@link OnStoreFailure#REJECT} (true) or {@link OnStoreFailure#ALLOW} (false). */
    public Builder failClosed(boolean failClosed) {
      return onStoreFailure(failClosed ? OnStoreFailure.REJECT : OnStoreFailure.ALLOW);
    }

    /** What a request gets when the store fails or times out; {@code ALLOW} by default. */
    public Builder onStoreFailure(OnStoreFailure onStoreFailure) {
      this.onStoreFailure = Objects.requireNonNull(onStoreFailure, "onStoreFailure");
      return this;
    }

    /**
     * How many instances share the rule's limits, for {@link OnStoreFailure#LOCAL}: each limits at
     * {@code limit ÷ instances} (rounded up) while the store fails; {@link Sync#AUTO_INSTANCES}
     * follows the fleet's live count. With {@link #sync}, its instances count.
     */
    public Builder instances(int instances) {
      if (instances < 1 && instances != Sync.AUTO_INSTANCES) {
        throw new IllegalArgumentException("instances must be at least 1: " + instances);
      }
      this.instances = instances;
      return this;
    }

    /** Counts in two layers ({@link Sync}); null for a store call on every decision. */
    public Builder sync(Sync sync) {
      this.sync = sync;
      return this;
    }

    /**
     * A concurrency rule: at most {@code limit} requests of one identity in flight at once, fleet
     * wide; a slot never given back (its instance died) comes back within {@code 2 × slotTtl}. It
     * replaces the rule's algorithm and tiers.
     */
    public Builder concurrency(long limit, Duration slotTtl) {
      this.algorithm = Algorithm.CONCURRENCY;
      this.tiers.clear();
      return tier(limit, slotTtl);
    }

    /** Fixed window only: shifts each identity's window boundary by a hash of it. */
    public Builder staggerWindows(boolean stagger) {
      this.staggerWindows = stagger;
      return this;
    }

    /**
     * Builds the rule.
     *
     * @throws IllegalArgumentException if it has no tier, two tiers share a period, or a path key
     *     names no capture
     */
    public Rule build() {
      RuleChecks.settings(id, algorithm, tiers, staggerWindows, sync, onStoreFailure);
      Rule rule = new Rule(this);
      RuleChecks.keySources(rule.key, rule.pattern(), path);
      return rule;
    }
  }
}
