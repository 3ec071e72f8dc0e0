package dev.sluice.control;

import dev.sluice.Background;
import dev.sluice.engine.LogGate;
import dev.sluice.spi.SharedValues;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.DoubleSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Steers a throttle's {@code rate} knob to hold a load signal at a setpoint, for the whole fleet: a
 * PID controller with a circuit breaker. Every {@code interval} it reads the load and writes {@code
 * throttle:NAME rate=…} to the store's knobs, which every instance's {@link Throttles} then apply.
 *
 * <ul>
 *   <li>The PID works in velocity form: each step moves the rate by {@code kp·Δe + ki·e·dt −
 *       kd·Δ²load/dt} with {@code e = setpoint − load}, clamped to {@code [0, maxRate]}. The rate
 *       is its only state, so nothing winds up while it sits at a bound (anti-windup).
 *   <li>A late signal (metrics that lag 15 s or more) is tolerated by {@link Builder#rampUp}: the
 *       rate rises at most from 0 to {@code maxRate} over that long, so the governor cannot raise
 *       it faster than it can see the effect. It falls as fast as the PID asks.
 *   <li>The circuit breaker: a load at or above {@link Builder#tripLevel} sets the rate to 0 at
 *       once; the PID ramps it up again once the load is back below.
 *   <li>One instance steers a throttle at a time: it holds a lease in the store ({@code
 *       governor:NAME}, renewed every tick, living 3 intervals). If it dies, another takes over
 *       within 3 intervals plus one tick.
 *   <li>A signal that throws, or reads NaN, leaves the rate where it is, and is logged at most once
 *       a minute; so is a store that cannot answer.
 * </ul>
 *
 * <p>docs/GOVERNOR.md shows a run through a 5× spike and how to tune the gains with the {@code
 * sluice governor} command's simulation. Thread-safe.
 */
public final class Governor implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(Governor.class);

  private final SharedValues values;
  private final String throttle;
  private final DoubleSupplier signal;
  private final InstantSource clock;
  private final Lease lease;
  private final Pid pid;
  private final LogGate problems = new LogGate(60_000);

  /** The periodic tick; null for a governor ticked by hand. */
  private final ScheduledFuture<?> task;

  final Duration interval;
  private long lastTick = -1;
  private double lastLoad = Double.NaN;
  private boolean leader;
  private long ignoredSignals;

  private Governor(Builder b, boolean background) {
    this.values = b.values;
    this.throttle = b.throttle;
    this.signal = Objects.requireNonNull(b.signal, "a signal is required");
    this.clock = b.clock;
    this.interval = b.interval;
    if (Double.isNaN(b.setpoint) || Double.isNaN(b.maxRate) || Double.isNaN(b.kp)) {
      throw new IllegalArgumentException("setpoint, maxRate and gains are required");
    }
    double maxRise =
        b.rampUp.isZero() ? Double.POSITIVE_INFINITY : b.maxRate / (b.rampUp.toMillis() / 1000.0);
    this.pid =
        new Pid(b.setpoint, b.kp, b.ki, b.kd, b.maxRate, b.tripLevel, maxRise, b.initialRate);
    this.lease = new Lease(values, "governor:" + throttle, b.owner, b.interval.multipliedBy(3));
    this.task =
        background
            ? b.scheduler.scheduleWithFixedDelay(
                this::tick, 0, b.interval.toMillis(), TimeUnit.MILLISECONDS)
            : null;
  }

  /** A governor of {@code throttle}'s rate knob in {@code values} (the store's shared values). */
  public static Builder builder(SharedValues values, String throttle) {
    return new Builder(values, throttle);
  }

  /** What the governor last saw and did. */
  public record State(boolean leader, double load, double rate, boolean tripped) {}

  /** {@return the state after the last tick} */
  public synchronized State state() {
    return new State(leader, lastLoad, pid.output(), pid.tripped());
  }

  /** One control step now: hold the lease, read the load, write the rate. Never throws. */
  public synchronized void tick() {
    long now = clock.millis();
    boolean was = leader;
    try {
      leader = lease.hold();
      if (leader && !was) {
        // Take over from the rate in force, not from scratch.
        SharedValues.Versioned v = values.get(Knobs.VALUE_NAME).orElse(null);
        if (v != null) {
          // -1 is unlimited: the nearest the governor sets is its highest rate.
          Knobs.parse(v.value(), Knobs.NONE, p -> {})
              .throttleRate(throttle)
              .ifPresent(r -> pid.reset(r < 0 ? Double.MAX_VALUE : r));
        }
      }
    } catch (RuntimeException e) {
      leader = false;
      problem("cannot reach the store for the lease", e);
      return;
    }
    if (!leader) {
      lastTick = -1;
      return;
    }
    double load;
    try {
      load = signal.getAsDouble();
    } catch (RuntimeException e) {
      problem("cannot read the load signal; the rate stays", e);
      return;
    }
    if (!Double.isFinite(load)) {
      ignoredSignals++;
      problem("the load signal read " + load + "; the rate stays", null);
      return;
    }
    // A step covers at most two intervals: after a gap (the signal or the store lost for minutes,
    // the clock jumping) the rate may not rise by the gap's worth at once.
    long gap = now - lastTick;
    long step = interval.toMillis();
    double dt = lastTick < 0 ? 0 : (gap < 0 ? step : Math.min(gap, 2 * step)) / 1000.0;
    lastTick = now;
    lastLoad = load;
    double rate = pid.step(load, dt);
    if (!stored(rate)) {
      try {
        String v = Double.toString(knob(rate));
        Knobs.change(values, k -> k.with("throttle:" + throttle, "rate", v));
      } catch (RuntimeException e) {
        problem("cannot write the rate knob", e);
      }
    }
  }

  /**
   * Whether the store holds {@code rate} as the throttle's knob: the rate is written when it moves,
   * and a knob memcached lost (evicted, restarted) is written again even while the rate holds still
   * (a tripped breaker's 0). A store that cannot be read is written to.
   */
  private boolean stored(double rate) {
    try {
      SharedValues.Versioned v = values.get(Knobs.VALUE_NAME).orElse(null);
      return v != null
          && Knobs.parse(v.value(), Knobs.NONE, p -> {})
              .throttleRate(throttle)
              .equals(java.util.OptionalDouble.of(knob(rate)));
    } catch (RuntimeException e) {
      return false;
    }
  }

  /** The rate as the knob holds it: to a thousandth of a permit per second. */
  private static double knob(double rate) {
    return Math.round(rate * 1000) / 1000.0;
  }

  /** {@return how often the governor reads the load and writes the rate} */
  public Duration interval() {
    return interval;
  }

  /** Load signal samples that read NaN or infinite and were ignored. */
  public synchronized long ignoredSignals() {
    return ignoredSignals;
  }

  private void problem(String what, RuntimeException e) {
    if (problems.tryAcquire(System.currentTimeMillis())) {
      LOG.warn(
          "governor of throttle '{}': {}{}; logged at most once a minute",
          throttle,
          what,
          e == null ? "" : " (" + e + ")");
    }
  }

  /** Stops steering and hands the lease over. */
  @Override
  public synchronized void close() {
    if (task != null) {
      task.cancel(false);
    }
    try {
      lease.release();
    } catch (RuntimeException e) {
      // The lease expires on its own.
    }
  }

  /** Configures a {@link Governor}. */
  public static final class Builder {
    private final SharedValues values;
    private final String throttle;
    private DoubleSupplier signal;
    private double setpoint = Double.NaN;
    private double kp = Double.NaN;
    private double ki;
    private double kd;
    private double maxRate = Double.NaN;
    private double initialRate;
    private double tripLevel = Double.POSITIVE_INFINITY;
    private Duration interval = Duration.ofSeconds(5);
    private Duration rampUp = Duration.ofMinutes(2);
    private InstantSource clock = InstantSource.system();
    private String owner = UUID.randomUUID().toString();
    private ScheduledExecutorService scheduler = Background.shared();

    private Builder(SharedValues values, String throttle) {
      this.values = Objects.requireNonNull(values, "values");
      Knobs.checkTarget("throttle:" + Objects.requireNonNull(throttle, "throttle"));
      this.throttle = throttle;
    }

    /** The load to hold at the setpoint: any reading, a Micrometer gauge, a Prometheus query. */
    public Builder signal(DoubleSupplier signal) {
      this.signal = Objects.requireNonNull(signal, "signal");
      return this;
    }

    /** The load to hold. */
    public Builder setpoint(double setpoint) {
      this.setpoint = finite("setpoint", setpoint);
      return this;
    }

    /** The gains: proportional, integral (per second) and derivative (seconds). */
    public Builder gains(double kp, double ki, double kd) {
      this.kp = finite("kp", kp);
      this.ki = finite("ki", ki);
      this.kd = finite("kd", kd);
      return this;
    }

    /** The highest rate the governor sets, in permits per second. */
    public Builder maxRate(double maxRate) {
      if (!(maxRate > 0) || !Double.isFinite(maxRate)) {
        throw new IllegalArgumentException("maxRate must be > 0");
      }
      this.maxRate = maxRate;
      return this;
    }

    /** The rate to start from before the first reading; 0 by default. */
    public Builder initialRate(double rate) {
      this.initialRate = finite("initialRate", rate);
      return this;
    }

    /** The load at which the breaker sets the rate to 0 at once; none by default. */
    public Builder tripLevel(double level) {
      this.tripLevel = finite("tripLevel", level);
      return this;
    }

    /** How often to read the load and set the rate; 5 s by default. */
    public Builder interval(Duration interval) {
      if (interval.toMillis() < 1) {
        throw new IllegalArgumentException("interval must be at least 1 ms");
      }
      this.interval = interval;
      return this;
    }

    /** The fastest the rate may go from 0 to {@code maxRate}; 2 min by default, 0 for no limit. */
    public Builder rampUp(Duration rampUp) {
      if (rampUp.isNegative()) {
        throw new IllegalArgumentException("rampUp must not be negative");
      }
      this.rampUp = rampUp;
      return this;
    }

    public Builder clock(InstantSource clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /** This instance's name in the lease; a random one by default. */
    public Builder owner(String owner) {
      this.owner = Objects.requireNonNull(owner, "owner");
      return this;
    }

    /** Where {@link #start()}'s governor steps: {@link Background#shared()} by default. */
    public Builder scheduler(ScheduledExecutorService scheduler) {
      this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
      return this;
    }

    /** {@return a governor that steps every interval on its scheduler} */
    public Governor start() {
      return new Governor(this, true);
    }

    /**
     * {@return a governor that steps only when {@link Governor#tick} is called (simulations,
     * tests)}
     */
    public Governor build() {
      return new Governor(this, false);
    }

    private static double finite(String name, double v) {
      if (!Double.isFinite(v)) {
        throw new IllegalArgumentException(name + " must be a finite number");
      }
      return v;
    }
  }
}
