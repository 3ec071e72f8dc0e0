package dev.sluice.http;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.OptionalInt;

/**
 * Load shedding for a {@link RequestLimiter}: priority classes, the fleet-usage shedder and the
 * worker-utilization shedder (Stripe's), each answering an overload with a 503.
 *
 * <ul>
 *   <li><b>Classes</b>: the first {@link PriorityClass} that matches a request is its class.
 *   <li><b>Fleet usage</b>: at most {@code capacity} requests in flight across the fleet, counted
 *       in the store; a fraction ({@code reserve}, 20 %) is kept for critical requests, so others
 *       are refused past {@code capacity × (1 − reserve)}.
 *   <li><b>Worker utilization</b>: per instance, from its worker threads (or a supplier, or an
 *       adaptive limit: see {@link dev.sluice.shedding.LoadShedder.Builder}); sheds the lowest
 *       classes first, slowly, never the critical one.
 * </ul>
 *
 * Immutable.
 */
public final class Shedding {

  /** Fleet shedder off. */
  public static final long NO_FLEET = 0;

  private final List<PriorityClass> classes;
  private final long fleetCapacity;
  private final double reserve;
  private final Duration slotTtl;
  private final int workers;
  private final String adaptive;
  private final Duration delay;
  private final Duration ramp;
  private final Duration retryAfter;

  private Shedding(Builder b) {
    this.classes = List.copyOf(b.classes == null ? PriorityClass.defaults() : b.classes);
    this.fleetCapacity = b.fleetCapacity;
    this.reserve = b.reserve;
    this.slotTtl = b.slotTtl;
    this.workers = b.workers;
    this.adaptive = b.adaptive;
    this.delay = b.delay;
    this.ramp = b.ramp;
    this.retryAfter = b.retryAfter;
  }

  public static Builder builder() {
    return new Builder();
  }

  public List<PriorityClass> classes() {
    return classes;
  }

  /** Requests in flight the fleet may hold, or {@link #NO_FLEET}. */
  public long fleetCapacity() {
    return fleetCapacity;
  }

  /** {@return the fraction of the fleet's capacity only critical requests may use} */
  public double reserve() {
    return reserve;
  }

  /**
   * {@return how long a fleet slot lives if its instance dies (it comes back within two of these)}
   */
  public Duration slotTtl() {
    return slotTtl;
  }

  /** Worker threads of this instance, when the worker shedder reads them. */
  public OptionalInt workers() {
    return workers > 0 ? OptionalInt.of(workers) : OptionalInt.empty();
  }

  /**
   * The Netflix adaptive limit that estimates this instance's capacity, {@code gradient2} or {@code
   * vegas}, or empty.
   */
  public java.util.Optional<String> adaptive() {
    return java.util.Optional.ofNullable(adaptive);
  }

  public Duration delay() {
    return delay;
  }

  public Duration ramp() {
    return ramp;
  }

  public Duration retryAfter() {
    return retryAfter;
  }

  /**
   * {@return the most non-critical requests the fleet may hold: {@code floor(capacity × (1 −
   * reserve))}}
   */
  public long nonCriticalCapacity() {
    return Math.max(1, (long) Math.floor(fleetCapacity * (1 - reserve) + 1e-9));
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Shedding s
        && s.classes.equals(classes)
        && s.fleetCapacity == fleetCapacity
        && Double.compare(s.reserve, reserve) == 0
        && s.slotTtl.equals(slotTtl)
        && s.workers == workers
        && Objects.equals(s.adaptive, adaptive)
        && s.delay.equals(delay)
        && s.ramp.equals(ramp)
        && s.retryAfter.equals(retryAfter);
  }

  @Override
  public int hashCode() {
    return Objects.hash(classes, fleetCapacity, reserve, workers, adaptive);
  }

  @Override
  public String toString() {
    return "load shedding: classes "
        + classes
        + (fleetCapacity > 0
            ? "; fleet " + fleetCapacity + " in flight, " + Math.round(reserve * 100) + "% reserved"
            : "")
        + (workers > 0 ? "; " + workers + " workers" : "")
        + (adaptive != null ? "; adaptive " + adaptive : "");
  }

  /** Configures {@link Shedding}; validates each value when it is set. */
  public static final class Builder {
    private List<PriorityClass> classes;
    private long fleetCapacity;
    private double reserve = 0.2;
    private Duration slotTtl = Rule.DEFAULT_SLOT_TTL;
    private int workers;
    private String adaptive;
    private Duration delay = Duration.ofSeconds(28);
    private Duration ramp = Duration.ofMinutes(2);
    private Duration retryAfter = Duration.ofSeconds(1);

    private Builder() {}

    /** The classes, first match wins; {@link PriorityClass#defaults()} unless set. */
    public Builder classes(List<PriorityClass> classes) {
      List<String> names = new ArrayList<>();
      for (PriorityClass c : classes) {
        if (names.contains(c.name())) {
          throw new IllegalArgumentException("two priority classes named '" + c.name() + "'");
        }
        names.add(c.name());
      }
      this.classes = List.copyOf(classes);
      return this;
    }

    /** The fleet-usage shedder: {@code capacity} in flight, {@code reserve} of it for critical. */
    public Builder fleet(long capacity, double reserve) {
      if (capacity <= 0) {
        throw new IllegalArgumentException("fleet capacity must be > 0");
      }
      if (!(reserve >= 0 && reserve < 1)) {
        throw new IllegalArgumentException("reserve must be in [0, 1)");
      }
      this.fleetCapacity = capacity;
      this.reserve = reserve;
      return this;
    }

    public Builder slotTtl(Duration slotTtl) {
      if (slotTtl.isNegative() || slotTtl.isZero()) {
        throw new IllegalArgumentException("slotTtl must be > 0");
      }
      this.slotTtl = slotTtl;
      return this;
    }

    /** The worker shedder, on utilization = requests in flight ÷ {@code workers}. */
    public Builder workers(int workers) {
      if (workers <= 0) {
        throw new IllegalArgumentException("workers must be > 0");
      }
      this.workers = workers;
      return this;
    }

    /**
     * The worker shedder, on utilization = requests in flight ÷ Netflix's adaptive estimate: {@code
     * gradient2} or {@code vegas} (needs {@code sluice-shedding-adaptive}).
     */
    public Builder adaptive(String limit) {
      if (!limit.equals("gradient2") && !limit.equals("vegas")) {
        throw new IllegalArgumentException(
            "unknown adaptive limit '" + limit + "' (use gradient2 or vegas)");
      }
      this.adaptive = limit;
      return this;
    }

    /** Full overload held this long before shedding starts; 28 s. */
    public Builder delay(Duration delay) {
      if (delay.isNegative()) {
        throw new IllegalArgumentException("delay must be >= 0");
      }
      this.delay = delay;
      return this;
    }

    /** Shedding goes from none to all at most this fast; 120 s. */
    public Builder ramp(Duration ramp) {
      if (ramp.isNegative() || ramp.isZero()) {
        throw new IllegalArgumentException("ramp must be > 0");
      }
      this.ramp = ramp;
      return this;
    }

    /** What a shed request is told to wait; 1 s. */
    public Builder retryAfter(Duration retryAfter) {
      this.retryAfter = Objects.requireNonNull(retryAfter, "retryAfter");
      return this;
    }

    public Shedding build() {
      return new Shedding(this);
    }
  }
}
