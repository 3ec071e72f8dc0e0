package dev.sluice;

import dev.sluice.spi.CounterStore;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Limits how often each key (a client, an API key, an IP…) may act: every tier must pass.
 *
 * <pre>{@code
 * RateLimiter limiter = RateLimiter.slidingWindow(store)
 *     .tier(50, Duration.ofSeconds(1))
 *     .tier(1000, Duration.ofSeconds(10))
 *     .build();
 * Decision d = limiter.tryAcquire(apiKey);
 * }</pre>
 *
 * <p>Each call counts first and decides after, in one batched store call for all tiers; a rejected
 * request gives its permits back to every tier. A key once rejected is answered from a local deny
 * cache, without a store call, until the instant it could pass. A store failure never throws: it
 * comes back as a decision marked failed-open (or failed-closed, when configured).
 *
 * <p>Implementations are thread-safe.
 */
public interface RateLimiter {

  /** Asks for one permit for {@code key}. */
  default Decision tryAcquire(String key) {
    return tryAcquire(key, 1);
  }

  /**
   * Asks for {@code permits} permits for {@code key}; any string is a valid key.
   *
   * @throws IllegalArgumentException if {@code permits <= 0}
   */
  Decision tryAcquire(String key, long permits);

  /** A builder of a sliding-window, fixed-rate limiter (Cloudflare's two-window counter). */
  static Builder slidingWindow(CounterStore store) {
    return new Builder(Algorithm.SLIDING_WINDOW, store);
  }

  /** A builder of a fixed-window limiter. */
  static Builder fixedWindow(CounterStore store) {
    return new Builder(Algorithm.FIXED_WINDOW, store);
  }

  /** Configures a {@link RateLimiter}; not thread-safe, validates each value when it is set. */
  final class Builder {
    /** Deny cache entries per limiter unless told otherwise. */
    public static final int DEFAULT_DENY_CACHE_SIZE = 10_000;

    private final Algorithm algorithm;
    private final CounterStore store;
    private final List<Tier> tiers = new ArrayList<>();
    private InstantSource clock = InstantSource.system();
    private String id = "default";
    private boolean failClosed;
    private boolean staggered;
    private int denyCacheSize = DEFAULT_DENY_CACHE_SIZE;

    Builder(Algorithm algorithm, CounterStore store) {
      this.algorithm = algorithm;
      this.store = Objects.requireNonNull(store, "store");
    }

    /** Adds a tier: at most {@code limit} permits per {@code period}. */
    public Builder tier(long limit, Duration period) {
      return tier(new Tier(limit, period));
    }

    /** Adds a tier. */
    public Builder tier(Tier tier) {
      tiers.add(Objects.requireNonNull(tier, "tier"));
      return this;
    }

    /** Where time comes from; the system clock by default. A fleet must share wall-clock time. */
    public Builder clock(InstantSource clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * Names the limiter; counters of limiters with different ids never mix. "default" by default.
     */
    public Builder id(String id) {
      Objects.requireNonNull(id, "id");
      if (id.isEmpty()) {
        throw new IllegalArgumentException("id must not be empty");
      }
      this.id = id;
      return this;
    }

    /** Whether to reject (true) or allow (false, the default) when the store fails. */
    public Builder failClosed(boolean failClosed) {
      this.failClosed = failClosed;
      return this;
    }

    /**
     * Fixed window only: shifts each key's window boundary by a hash of the key, so clients do not
     * all reset at the same instant. Off by default.
     */
    public Builder staggerWindows(boolean staggered) {
      if (staggered && algorithm != Algorithm.FIXED_WINDOW) {
        throw new IllegalArgumentException("staggerWindows applies to the fixed window only");
      }
      this.staggered = staggered;
      return this;
    }

    /** Bounds the local deny cache; 0 turns it off. */
    public Builder denyCacheSize(int size) {
      if (size < 0) {
        throw new IllegalArgumentException("denyCacheSize must be >= 0");
      }
      this.denyCacheSize = size;
      return this;
    }

    /**
     * Builds the limiter.
     *
     * @throws IllegalArgumentException if no tier was added
     */
    public RateLimiter build() {
      if (tiers.isEmpty()) {
        throw new IllegalArgumentException("tiers: at least one tier is required");
      }
      Tier.checkDistinctPeriods(tiers);
      Policy policy = new Policy(id, algorithm, tiers, failClosed, false, staggered, denyCacheSize);
      return new SingleRateLimiter(new Evaluator(store, clock), policy);
    }
  }
}
