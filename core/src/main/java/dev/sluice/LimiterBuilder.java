package dev.sluice;

import dev.sluice.algorithm.TierLimit;
import dev.sluice.engine.Answer;
import dev.sluice.engine.Api;
import dev.sluice.engine.CoarseClock;
import dev.sluice.engine.Engine;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterUpdate;
import dev.sluice.spi.SharedValues;
import java.time.InstantSource;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ScheduledExecutorService;

/**
 * The settings every limiter shares, whatever it limits: the store, the clock, the deny cache and
 * the listener. {@link RateLimiter.Builder} and the builders of the HTTP and control modules extend
 * it, so each setting is defined, defaulted and checked once. Not thread-safe.
 *
 * @param <B> the concrete builder, returned by every setter
 */
public abstract class LimiterBuilder<B extends LimiterBuilder<B>> {

  static {
    Api.set(new Bridge());
  }

  /** Deny cache entries per policy unless told otherwise. */
  public static final int DEFAULT_DENY_CACHE_SIZE = 10_000;

  final CounterStore store;
  InstantSource clock;

  /** Whether {@link #clock} was given; if not, a store's clock corrects the default. */
  private boolean clockGiven;

  int denyCacheSize = DEFAULT_DENY_CACHE_SIZE;
  DecisionListener listener = DecisionListener.NONE;

  /** Whether two-layer counters sync in the background; tests sync by hand. */
  boolean backgroundSync = true;

  /** Where background work runs: knob reads and two-layer syncs. */
  ScheduledExecutorService scheduler = Background.shared();

  /**
   * Starts the settings of a limiter on {@code store}, reading the coarse clock: the system clock
   * read once a millisecond by a thread of its own, for key limiters and throttles, which may be
   * called in a hot loop.
   *
   * @param store where the limiter's counters live
   */
  protected LimiterBuilder(CounterStore store) {
    this(store, CoarseClock.shared());
  }

  /**
   * Starts the settings of a limiter on {@code store} that reads {@code hostClock} unless given
   * another ({@link #clock(InstantSource)}), corrected by the store's clock where the store offers
   * one.
   *
   * @param store where the limiter's counters live
   * @param hostClock the host's clock by default
   */
  protected LimiterBuilder(CounterStore store, InstantSource hostClock) {
    this.store = Objects.requireNonNull(store, "store");
    this.clock = Objects.requireNonNull(hostClock, "hostClock");
  }

  @SuppressWarnings("unchecked")
  private B self() {
    return (B) this;
  }

  /**
   * Where time comes from. By default the host's clock (the coarse clock for a key limiter, the
   * system clock for HTTP rules), corrected by the store's clock where the store offers one
   * (memcached and Redis do), so that a fleet whose hosts' clocks disagree still computes one
   * window at a time. A clock given here is read as it is.
   *
   * @param clock the limiter's time
   * @return this builder
   */
  public B clock(InstantSource clock) {
    this.clock = Objects.requireNonNull(clock, "clock");
    this.clockGiven = true;
    return self();
  }

  /** The host's clock that a store's clock corrects, read as the default clock is; for tests. */
  B hostClock(InstantSource clock) {
    this.clock = Objects.requireNonNull(clock, "clock");
    this.clockGiven = false;
    return self();
  }

  /**
   * Bounds each policy's local deny cache, which answers a rejected identity without a store call
   * until it could pass; 0 turns it off. {@value #DEFAULT_DENY_CACHE_SIZE} by default.
   *
   * @param size the most rejected identities each policy remembers
   * @return this builder
   * @throws IllegalArgumentException for a negative or too large size
   */
  public B denyCacheSize(int size) {
    if (size < 0 || size > Engine.MAX_DENY_CACHE_SIZE) {
      throw new IllegalArgumentException(
          "denyCacheSize must be from 0 to " + Engine.MAX_DENY_CACHE_SIZE + ": " + size);
    }
    this.denyCacheSize = size;
    return self();
  }

  /**
   * Where the limiter's background work runs (reading the knobs, syncing two-layer counters): the
   * JVM's {@link Background#shared()} scheduler by default.
   *
   * @param scheduler the application's own scheduler, which it shuts down itself
   * @return this builder
   */
  public B scheduler(ScheduledExecutorService scheduler) {
    this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
    return self();
  }

  /**
   * Hears every decision, for metrics and logs; none by default.
   *
   * @param listener called on the request thread after each decision
   * @return this builder
   */
  public B listener(DecisionListener listener) {
    this.listener = Objects.requireNonNull(listener, "listener");
    return self();
  }

  /**
   * The store's shared values, for knobs.
   *
   * @return the store's shared values
   * @throws IllegalArgumentException if the store keeps none
   */
  protected SharedValues sharedValues() {
    return store
        .sharedValues()
        .orElseThrow(
            () ->
                new IllegalArgumentException(
                    "knobs need a store that keeps shared values; " + store + " keeps none"));
  }

  /**
   * Where this limiter's background work runs, for the builders whose limiters schedule some of
   * their own (reading the knobs).
   *
   * @return the scheduler given, or the shared one
   */
  protected ScheduledExecutorService backgroundScheduler() {
    return scheduler;
  }

  /** What the engine reads and makes of this package's types. */
  private static final class Bridge extends Api {
    @Override
    protected TierLimit limitOf(Algorithm algorithm, Tier tier, boolean staggered) {
      return algorithm.limit(tier, staggered);
    }

    @Override
    protected Answer answerOf(Outcome out) {
      return out.answer;
    }

    @Override
    protected Decision decisionOf(Answer copy) {
      return new Decision(copy);
    }

    @Override
    protected Slots slotsOf(CounterStore store, List<CounterUpdate> held) {
      return new Slots(store, held);
    }

    @Override
    protected Slots slotsWith(Slots slots, Runnable exit) {
      return slots.with(exit);
    }

    @Override
    protected Engine engineOf(LimiterBuilder<?> b) {
      return new Engine(
          b.store,
          b.clock,
          b.clockGiven,
          b.backgroundSync,
          b.scheduler,
          b.denyCacheSize,
          b.listener);
    }
  }
}
