package dev.sluice.control;

import dev.sluice.Algorithm;
import dev.sluice.LimiterBuilder;
import dev.sluice.Outcome;
import dev.sluice.Tier;
import dev.sluice.engine.Engine;
import dev.sluice.engine.Policy;
import dev.sluice.spi.CounterStore;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * The throttles of one application, counted in one store: in memory for one process, or in
 * memcached for a fleet, where every instance shares each throttle's pace.
 *
 * <p>A throttle takes LimitLion's settings: {@code rate} permits per second, a {@code burst}
 * multiplier (1 by default) and a {@code window} (5 s by default).
 *
 * <ul>
 *   <li>With burst 1 it is LimitLion's bucket exactly: {@code ceil(rate × window)} permits per
 *       window, refilled whole when the next window begins (windows start at multiples of the
 *       window since the epoch, so every instance agrees without storing when a bucket began).
 *   <li>With burst {@code b > 1} it holds {@code ceil(rate × b × window)} permits in a sliding
 *       window of {@code b × window}: that many can go at once after a quiet spell, and over the
 *       long run the pace is {@code rate}. Unlike LimitLion's bucket, which refills at {@code rate}
 *       right after a burst, it waits until the window has slid past most of the burst, so no span
 *       of {@code b × window} holds more than about one burst.
 *   <li>A rate of 0 refuses everything (sleep a whole window); -1 lets everything through.
 * </ul>
 *
 * <p>Knobs ({@link Builder#knobs}) override a throttle's {@code rate} and {@code burst} for the
 * whole fleet at runtime. Thread-safe.
 */
public final class Throttles implements AutoCloseable {

  /** LimitLion's default window. */
  public static final Duration DEFAULT_WINDOW = Duration.ofSeconds(5);

  /** Sleeps for {@link Throttle#acquire}; tests sleep on a fake clock. */
  interface Sleeper {
    void sleep(Duration d) throws InterruptedException;
  }

  /** A throttle's settings in force: its own, with knobs over them, and the policy they make. */
  record Settings(double rate, double burst, Duration window, Policy policy) {
    @Override
    public String toString() {
      return "rate=" + rate + "/s burst=" + burst + " window=" + window.toMillis() + "ms";
    }
  }

  /** A throttle's settings as its code asked for them, before knobs. */
  private record Spec(double rate, double burst, Duration window) {}

  private final Engine engine;
  private final boolean failClosed;
  private final Sleeper sleeper;
  private final ConcurrentMap<String, Throttle> throttles = new ConcurrentHashMap<>();
  private final ConcurrentMap<String, Spec> specs = new ConcurrentHashMap<>();
  private final Optional<KnobWatcher> watcher;
  private volatile Knobs knobs = Knobs.NONE;

  private Throttles(Builder b) {
    this.engine = Engine.of(b);
    this.failClosed = b.failClosed;
    this.sleeper = b.sleeper;
    this.watcher = b.watch(this::applyKnobs);
  }

  public static Builder builder(CounterStore store) {
    return new Builder(store);
  }

  /** The throttle {@code name} at {@code rate} permits per second, burst 1, over 5 s windows. */
  public Throttle throttle(String name, double rate) {
    return throttle(name, rate, 1, DEFAULT_WINDOW);
  }

  /**
   * The throttle {@code name}: made at the first ask, and the same one for every later ask of the
   * same name (how workloads share a throttle).
   *
   * @throws IllegalArgumentException if the name is not a plain word, a setting is out of range, or
   *     the throttle already exists with other settings
   */
  public Throttle throttle(String name, double rate, double burst, Duration window) {
    Knobs.checkTarget("throttle:" + Objects.requireNonNull(name, "name"));
    Spec spec = new Spec(rate, burst, Objects.requireNonNull(window, "window"));
    Throttle t = throttles.get(name);
    if (t == null) {
      settings(name, spec, Knobs.NONE);
      synchronized (this) {
        // Made under the lock applyKnobs holds, so it starts with the knobs in force.
        t = throttles.get(name);
        if (t == null) {
          specs.put(name, spec);
          t = new Throttle(name, this, settings(name, spec, knobs));
          throttles.put(name, t);
        }
      }
    }
    Spec existing = specs.get(name);
    if (!existing.equals(spec)) {
      throw new IllegalArgumentException(
          "throttle '" + name + "' already exists with other settings: " + existing);
    }
    return t;
  }

  /**
   * Puts the fleet's knobs over every throttle's settings: {@code throttle:NAME rate=… burst=…}. A
   * throttle built with {@link Builder#knobs} is told by its watcher; others can be told by hand.
   */
  public synchronized void applyKnobs(Knobs knobs) {
    this.knobs = Objects.requireNonNull(knobs, "knobs");
    throttles.forEach((name, t) -> t.settings(settings(name, specs.get(name), knobs)));
  }

  /** Stops reading the knobs, if these throttles read them. */
  @Override
  public void close() {
    watcher.ifPresent(KnobWatcher::close);
  }

  /**
   * The throttle's settings with its knobs over them; knobs it cannot take are ignored (logged
   * once) and it keeps its own.
   */
  private Settings settings(String name, Spec spec, Knobs k) {
    if (k.throttleRate(name).isEmpty() && k.throttleBurst(name).isEmpty()) {
      return settings(name, spec, spec.rate, spec.burst);
    }
    try {
      return settings(
          name,
          spec,
          k.throttleRate(name).orElse(spec.rate),
          k.throttleBurst(name).orElse(spec.burst));
    } catch (IllegalArgumentException e) {
      Knobs.ignored(
          "throttle:" + name + " " + k.targets().get("throttle:" + name) + ": " + e.getMessage());
      return settings(name, spec, spec.rate, spec.burst);
    }
  }

  private Settings settings(String name, Spec spec, double rate, double burst) {
    Duration window = spec.window;
    if (!(rate >= 0 || rate == -1) || !Double.isFinite(rate)) {
      throw new IllegalArgumentException("rate must be >= 0, or -1 for unlimited: " + rate);
    }
    if (!(burst >= 1) || !Double.isFinite(burst)) {
      throw new IllegalArgumentException("burst must be >= 1: " + burst);
    }
    if (window.toMillis() < 1 || window.compareTo(Duration.ofDays(1)) > 0) {
      throw new IllegalArgumentException("window must be from 1 ms to 1 day: " + window);
    }
    if (rate <= 0) {
      return new Settings(rate, burst, window, null);
    }
    // Rates such as 0.1/s over 30 s must give 3, not 4: round away the floating-point dust.
    long permits = (long) Math.max(1, Math.ceil(rate * burst * window.toMillis() / 1000.0 - 1e-9));
    Policy p =
        burst == 1
            ? engine.policy(
                "throttle:" + name,
                Algorithm.FIXED_WINDOW,
                List.of(new Tier(permits, window)),
                failClosed,
                false,
                false)
            : engine.policy(
                "throttle:" + name,
                Algorithm.SLIDING_WINDOW,
                List.of(
                    new Tier(permits, Duration.ofMillis(Math.round(burst * window.toMillis())))),
                failClosed,
                false,
                false);
    return new Settings(rate, burst, window, p);
  }

  Throttle.Permit decide(Throttle t, Settings s, String key, long tokens) {
    if (s.rate == -1) {
      return new Throttle.Permit(true, Long.MAX_VALUE, Duration.ZERO);
    }
    if (s.policy == null) {
      return new Throttle.Permit(false, 0, s.window);
    }
    Outcome out = new Outcome();
    engine.begin(out);
    engine.add(out, s.policy, key);
    boolean allowed = engine.decide(out, tokens);
    return new Throttle.Permit(
        allowed, out.remaining(), Duration.ofMillis(allowed ? 0 : out.retryAfterMillis()));
  }

  void sleep(Duration d) throws InterruptedException {
    sleeper.sleep(d);
  }

  /** Configures {@link Throttles}. */
  public static final class Builder extends LimiterBuilder<Builder> {
    private boolean failClosed = true;
    Sleeper sleeper = d -> Thread.sleep(Math.max(1, d.toMillis()));

    private Builder(CounterStore store) {
      super(store);
    }

    /**
     * Whether work waits (true, the default) or goes ahead (false) while the store cannot answer.
     * Waiting is the default because a throttle protects a backend, and the store being down says
     * nothing about how much that backend can take.
     */
    public Builder failClosed(boolean failClosed) {
      this.failClosed = failClosed;
      return this;
    }

    private final KnobRefresh knobRefresh = new KnobRefresh();

    /**
     * Reads the fleet's knobs from the store every {@code refresh} and applies each throttle's.
     *
     * @throws IllegalArgumentException if the store keeps no shared values or {@code refresh} is
     *     not positive
     */
    public Builder knobs(Duration refresh) {
      knobRefresh.every(this::sharedValues, refresh);
      return this;
    }

    public Throttles build() {
      return new Throttles(this);
    }

    private Optional<KnobWatcher> watch(java.util.function.Consumer<Knobs> apply) {
      return knobRefresh.start(this::sharedValues, backgroundScheduler(), apply);
    }
  }
}
