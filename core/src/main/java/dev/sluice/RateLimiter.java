package dev.sluice;

import dev.sluice.engine.Engine;
import dev.sluice.spi.CounterStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

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
 * <p>{@link #tryAcquire(String, long, Outcome)} writes into an {@link Outcome} the caller reuses
 * and allocates nothing on the allow path; the others return an immutable {@link Decision}.
 *
 * <p>Implementations are thread-safe.
 */
public interface RateLimiter {

  /**
   * Asks for one permit for {@code key}.
   *
   * @param key whose counters to count against; any string
   * @return the decision: whether it passed, the quotas, and when to retry if it did not
   */
  default Decision tryAcquire(String key) {
    return tryAcquire(key, 1);
  }

  /**
   * Asks for {@code permits} permits for {@code key}; any string is a valid key.
   *
   * @param key whose counters to count against
   * @param permits how many permits the request costs, &gt; 0
   * @return the decision: whether it passed, the quotas, and when to retry if it did not
   * @throws IllegalArgumentException if {@code permits <= 0}
   */
  default Decision tryAcquire(String key, long permits) {
    Outcome out = new Outcome();
    tryAcquire(key, permits, out);
    return new Decision(out.answer); // this call's own outcome: its answer needs no copy
  }

  /**
   * Asks for {@code permits} permits for {@code key} and writes the answer into {@code out}.
   *
   * @param key whose counters to count against
   * @param permits how many permits the request costs, &gt; 0
   * @param out the outcome to overwrite, one per thread, reused from call to call
   * @return whether the permits were granted ({@code out.allowed()})
   * @throws IllegalArgumentException if {@code permits <= 0}
   */
  boolean tryAcquire(String key, long permits, Outcome out);

  /**
   * A builder of a sliding-window, fixed-rate limiter (Cloudflare's two-window counter).
   *
   * @param store where the counters live
   * @return a builder with no tier yet
   */
  static Builder slidingWindow(CounterStore store) {
    return new Builder(Algorithm.SLIDING_WINDOW, store);
  }

  /**
   * A builder of a fixed-window limiter.
   *
   * @param store where the counters live
   * @return a builder with no tier yet
   */
  static Builder fixedWindow(CounterStore store) {
    return new Builder(Algorithm.FIXED_WINDOW, store);
  }

  /**
   * A builder of an exact token-bucket limiter (GCRA): {@code tier(limit, period, burst)} holds
   * {@code burst} tokens and refills {@code limit} per {@code period}; one tier.
   *
   * <pre>{@code
   * RateLimiter bucket = RateLimiter.tokenBucket(store).tier(60, Duration.ofMinutes(1), 5).build();
   * }</pre>
   *
   * @param store where the counters live
   * @return a builder with no tier yet
   */
  static Builder tokenBucket(CounterStore store) {
    return new Builder(Algorithm.TOKEN_BUCKET, store);
  }

  /** Configures a {@link RateLimiter}; not thread-safe, validates each value when it is set. */
  final class Builder extends LimiterBuilder<Builder> {
    private final Algorithm algorithm;
    private final List<Tier> tiers = new ArrayList<>();
    private String id = "default";
    private boolean failClosed;
    private boolean staggered;
    private Sync sync;

    Builder(Algorithm algorithm, CounterStore store) {
      super(store);
      this.algorithm = algorithm;
    }

    /**
     * Adds a tier: at most {@code limit} permits per {@code period}.
     *
     * @param limit permits per period, &gt; 0
     * @param period the window: whole milliseconds, from 1 ms to 366 days
     * @return this builder
     * @throws IllegalArgumentException for a limit or period out of range
     */
    public Builder tier(long limit, Duration period) {
      return tier(new Tier(limit, period));
    }

    /**
     * Adds a token bucket's tier: {@code burst} tokens at most, refilled at {@code limit} per
     * {@code period}.
     *
     * @param limit tokens refilled per period, &gt; 0
     * @param period the refill period: whole milliseconds, from 1 ms to 366 days
     * @param burst the bucket's size: the most permits that pass at once, &gt; 0
     * @return this builder
     * @throws IllegalArgumentException for a value out of range
     */
    public Builder tier(long limit, Duration period, long burst) {
      return tier(new Tier(limit, period, burst));
    }

    /**
     * Adds a tier; every tier must pass for a request to pass.
     *
     * @param tier the limit and its period
     * @return this builder
     */
    public Builder tier(Tier tier) {
      tiers.add(Objects.requireNonNull(tier, "tier"));
      return this;
    }

    /**
     * Names the limiter; counters of limiters with different ids never mix. "default" by default.
     *
     * @param id the name, not empty
     * @return this builder
     * @throws IllegalArgumentException for an empty id
     */
    public Builder id(String id) {
      Objects.requireNonNull(id, "id");
      if (id.isEmpty()) {
        throw new IllegalArgumentException("id must not be empty");
      }
      this.id = id;
      return this;
    }

    /**
     * Whether to reject (true) or allow (false, the default) when the store fails.
     *
     * @param failClosed true to reject while the store cannot answer
     * @return this builder
     */
    public Builder failClosed(boolean failClosed) {
      this.failClosed = failClosed;
      return this;
    }

    /**
     * Fixed window only: shifts each key's window boundary by a hash of the key, so clients do not
     * all reset at the same instant. Off by default.
     *
     * @param staggered whether to stagger
     * @return this builder
     * @throws IllegalArgumentException when staggering a limiter that is not a fixed window
     */
    public Builder staggerWindows(boolean staggered) {
      algorithm.checkStagger(staggered);
      this.staggered = staggered;
      return this;
    }

    /**
     * Counts in two layers: locally, synced with the store at most once per {@code sync.interval()}
     * per counter ({@link Sync}). Off by default: every decision goes to the store. Needs the
     * {@code sluice-twolayer} module on the class or module path ({@code sluice-http} brings it):
     * without it, {@link #build()} throws {@link IllegalStateException}.
     *
     * @param sync the interval and the instances that share the limit
     * @return this builder
     */
    public Builder sync(Sync sync) {
      this.sync = Objects.requireNonNull(sync, "sync");
      return this;
    }

    /**
     * Builds the limiter.
     *
     * @return a thread-safe limiter
     * @throws IllegalArgumentException if no tier was added
     * @throws IllegalStateException if {@link #sync} was set without the {@code sluice-twolayer}
     *     module on the class or module path
     */
    public RateLimiter build() {
      Engine engine = Engine.of(this);
      return engine.limiter(
          engine
              .policy(id, algorithm, tiers, failClosed, false, staggered)
              .withSync(Optional.ofNullable(sync)));
    }
  }
}
