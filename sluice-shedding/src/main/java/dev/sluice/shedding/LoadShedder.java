package dev.sluice.shedding;

import dev.sluice.DecisionListener;
import dev.sluice.Tier;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.DoubleSupplier;

/**
 * One instance's side of load shedding: the worker-utilization shedder (Stripe's last line of
 * defence). Utilization is this instance's requests in flight, averaged over the time since the
 * last sample (the share of worker time that was busy), over its worker threads, over an {@link
 * AdaptiveCapacity adaptive estimate} of its capacity (Netflix's {@code concurrency-limits} through
 * {@code sluice-shedding-adaptive}), or what a supplier the user gives says. A {@link
 * SheddingController} turns it into a shedding amount, slowly, and each request of a sheddable
 * class is dropped with the chance its rank gets: the lowest class first, never the critical one.
 * Driven by the HTTP rules' load-shedding plan, which writes its answers into the request's
 * outcome; thread-safe.
 */
public final class LoadShedder {

  /** The policy name of a refusal by the worker-utilization shedder. */
  public static final String WORKERS = "worker-utilization";

  /** The shedder names a {@link DecisionListener#onShed} hears. */
  public static final String FLEET = "fleet-usage";

  /** How often the controller samples utilization. */
  static final long TICK_MILLIS = 1_000;

  private final SheddingController controller;
  private final AtomicInteger inFlight = new AtomicInteger();
  private final java.util.concurrent.atomic.AtomicLong ignoredSignals =
      new java.util.concurrent.atomic.AtomicLong();
  private final int workers;
  private final DoubleSupplier utilization;
  private final AdaptiveCapacity adaptive;
  private final InstantSource clock;
  private final DoubleSupplier random;
  private final DecisionListener listener;
  private final long retryAfterMillis;

  /** What a shed outcome names as the shedder's capacity, when it is fixed. */
  private final Tier fixedTier;

  private final Object lock = new Object();

  /**
   * Guards the busy time: requests in flight integrated over the clock, so that a sample reads the
   * average since the last one, not the count at one request's arrival. Requests that arrive and
   * finish together (a pool's workers in step) make the count at an arrival anything from one to
   * all of them: read there, a saturated server could sample as idle every second.
   */
  private final Object busyLock = new Object();

  /** Requests in flight, as the busy time counts them; under {@link #busyLock}. */
  private int busy;

  /** When the busy time was last brought up to date (clock millis); under {@link #busyLock}. */
  private long busySince = Long.MIN_VALUE;

  /** Request-milliseconds in flight since the start; under {@link #busyLock}. */
  private long busyMillis;

  /** The busy time and the clock at the last sample; under {@link #busyLock}. */
  private long sampledBusyMillis;

  private long sampledAt = Long.MIN_VALUE;

  private volatile long nextUpdate = Long.MIN_VALUE;
  private volatile double amount;

  private LoadShedder(Builder b) {
    this.controller = new SheddingController(b.delay, b.ramp);
    this.amount = controller.amount();
    this.workers = b.workers;
    this.utilization = b.utilization;
    this.adaptive = b.adaptive;
    this.clock = b.clock;
    this.random = b.random;
    this.listener = b.listener;
    this.retryAfterMillis = b.retryAfter.toMillis();
    this.fixedTier = Tier.of(Math.max(1, workers), Duration.ofSeconds(1));
  }

  public static Builder builder() {
    return new Builder();
  }

  /**
   * {@return whether the worker-utilization shedder is on (workers, a supplier or an adaptive
   * limit)}
   */
  public boolean sheddingWorkers() {
    return workers > 0 || utilization != null || adaptive != null;
  }

  /**
   * Tells the listener that the fleet's shedder refused a request of class {@code priorityClass}.
   */
  public void refusedByFleet(String priorityClass) {
    tell(priorityClass, FLEET);
  }

  /**
   * Whether the worker-utilization shedder drops a request of rank {@code rank} among {@code ranks}
   * sheddable ranks (1 is shed first; 0, the critical class, never is): a draw against the chance
   * the current shedding amount gives that rank.
   */
  public boolean sheds(int rank, int ranks) {
    if (!sheddingWorkers() || rank <= 0) {
      return false;
    }
    double chance = SheddingController.dropChance(amount(clock.millis()), rank, ranks);
    return chance > 0 && random.getAsDouble() < chance;
  }

  /**
   * The chance, at the current shedding {@link #amount()}, that the worker-utilization shedder
   * drops a request of rank {@code rank} among {@code ranks} sheddable ranks: what a simulation
   * charts per class.
   */
  public double shedChance(int rank, int ranks) {
    return SheddingController.dropChance(amount(), rank, ranks);
  }

  /**
   * What a refusal by the worker-utilization shedder names as the shedder's capacity: its workers,
   * or the adaptive limit's estimate, per second.
   */
  public Tier capacityTier() {
    return adaptive == null ? fixedTier : Tier.of(Math.max(1, capacity()), Duration.ofSeconds(1));
  }

  /** {@return how long a request this shedder refuses is told to wait} */
  public long retryAfterMillis() {
    return retryAfterMillis;
  }

  /** Tells the listener that this shedder refused a request of class {@code priorityClass}. */
  public void refusedByWorkers(String priorityClass) {
    tell(priorityClass, WORKERS);
  }

  /**
   * Counts an admitted request in flight; the returned task, run once when the request completes,
   * counts it out (and teaches an adaptive limit its round trip). For a shedder that {@link
   * #sheddingWorkers sheds by workers}.
   */
  public Runnable enter() {
    inFlight.incrementAndGet();
    if (utilization == null) {
      moveBusy(1);
    }
    long since = System.nanoTime();
    return () -> exit(since);
  }

  private void exit(long since) {
    int before = inFlight.getAndDecrement();
    if (utilization == null) {
      moveBusy(-1);
    }
    if (adaptive != null) {
      try {
        adaptive.sample(since, System.nanoTime() - since, before);
      } catch (RuntimeException e) {
        // An estimate that fails leaves the last one in force.
      }
    }
  }

  /** Requests this instance counts in flight. */
  public int inFlight() {
    return inFlight.get();
  }

  /** {@return this instance's utilization now: from the supplier, or in flight over capacity} */
  public double utilization() {
    if (utilization != null) {
      return utilization.getAsDouble();
    }
    return inFlight.get() / (double) Math.max(1, capacity());
  }

  /** Brings the busy time up to now and moves the count in flight by {@code delta}. */
  private void moveBusy(int delta) {
    long now = clock.millis();
    synchronized (busyLock) {
      accrue(now);
      busy += delta;
    }
  }

  /** Adds the time since the last change at the current count; under {@link #busyLock}. */
  private void accrue(long now) {
    if (busySince == Long.MIN_VALUE || now < busySince - TICK_MILLIS) {
      // The first change, or a clock that stepped back: nothing to add, counted from now on.
      busySince = now;
    } else if (now > busySince) {
      busyMillis += busy * (now - busySince);
      busySince = now;
    }
    // A reading a little behind the last is a thread that read the clock before another took the
    // lock: its change counts from the later reading.
  }

  /**
   * What a sample at {@code now} reads: the supplier's utilization, or the average in flight since
   * the last sample over capacity (the count now, for the first sample or after a clock step).
   */
  private double sampledUtilization(long now) {
    if (utilization != null) {
      return utilization.getAsDouble();
    }
    double average;
    synchronized (busyLock) {
      accrue(now);
      long elapsed = now - sampledAt;
      average =
          sampledAt == Long.MIN_VALUE || elapsed <= 0
              ? busy
              : (busyMillis - sampledBusyMillis) / (double) elapsed;
      sampledAt = now;
      sampledBusyMillis = busyMillis;
    }
    return average / Math.max(1, capacity());
  }

  private int capacity() {
    return adaptive != null ? adaptive.capacity() : workers;
  }

  /**
   * The shedding amount: below 0 while resting, up to 1 when every sheddable class is dropped;
   * sampled at most once a second.
   */
  public double amount() {
    return amount(clock.millis());
  }

  private double amount(long now) {
    if (!due(now)) {
      return amount;
    }
    synchronized (lock) {
      if (due(now)) {
        double u;
        try {
          u = sampledUtilization(now);
        } catch (RuntimeException e) {
          u = SheddingController.END_OF_GOOD; // unknown: neither shed more nor less
        }
        if (Double.isFinite(u)) {
          amount = controller.update(u, now);
        } else {
          // A gauge whose object was collected reads NaN: the sample says nothing, skip it.
          ignoredSignals.incrementAndGet();
          tellIgnored();
        }
        nextUpdate = now + TICK_MILLIS;
      }
      return amount;
    }
  }

  /**
   * Whether a sample is due at {@code now}: a second after the last, or at once when the clock
   * stepped back (else the amount would hold for as long as the step).
   */
  private boolean due(long now) {
    long next = nextUpdate;
    // A reading a tick older than the last sample's is a step back, not a thread's stale read.
    return now >= next || now < next - 2 * TICK_MILLIS;
  }

  /** Utilization samples that read NaN or infinite and were ignored. */
  public long ignoredSignals() {
    return ignoredSignals.get();
  }

  private void tellIgnored() {
    try {
      listener.onIgnoredSignal(WORKERS);
    } catch (RuntimeException e) {
      // A listener never fails a decision.
    }
  }

  private void tell(String priorityClass, String shedder) {
    try {
      listener.onShed(priorityClass, shedder);
    } catch (RuntimeException e) {
      // A listener must not throw; if it does, the decision stands.
    }
  }

  /** Configures a {@link LoadShedder}. */
  public static final class Builder {
    private int workers;
    private DoubleSupplier utilization;
    private AdaptiveCapacity adaptive;
    private Duration delay = SheddingController.DEFAULT_DELAY;
    private Duration ramp = SheddingController.DEFAULT_RAMP;
    private Duration retryAfter = Duration.ofSeconds(1);
    private InstantSource clock = InstantSource.system();
    private DoubleSupplier random = () -> ThreadLocalRandom.current().nextDouble();
    private DecisionListener listener = DecisionListener.NONE;

    private Builder() {}

    /** Utilization is requests in flight over {@code workers} threads. */
    public Builder workers(int workers) {
      if (workers < 0) {
        throw new IllegalArgumentException("workers must be >= 0");
      }
      this.workers = workers;
      return this;
    }

    /** Utilization is what {@code utilization} says, from 0 (idle) to 1 (every worker busy). */
    public Builder utilization(DoubleSupplier utilization) {
      this.utilization = utilization;
      return this;
    }

    /**
     * Utilization is requests in flight over an adaptive estimate of this instance's capacity,
     * which learns from each completed request's latency; for when the worker count is not known.
     * {@code sluice-shedding-adaptive}'s {@code NetflixCapacity.of} makes one of any Netflix limit.
     *
     * @param capacity the estimate, used by this shedder alone
     * @return this builder
     */
    public Builder adaptive(AdaptiveCapacity capacity) {
      this.adaptive = Objects.requireNonNull(capacity, "capacity");
      return this;
    }

    /**
     * {@link #adaptive(AdaptiveCapacity)} with an estimate found by name through {@link
     * AdaptiveCapacityProvider}: Netflix's default {@code gradient2} or {@code vegas} limit when
     * {@code sluice-shedding-adaptive} is on the class path.
     *
     * @param limit the estimate's name
     * @return this builder
     * @throws IllegalStateException when no provider is on the class path
     * @throws IllegalArgumentException for a name no provider knows
     */
    public Builder adaptive(String limit) {
      ClassLoader loader = Thread.currentThread().getContextClassLoader();
      try {
        this.adaptive =
            AdaptiveCapacityProvider.find(
                limit, loader != null ? loader : LoadShedder.class.getClassLoader());
      } catch (IllegalStateException e) {
        if (loader == null || loader == LoadShedder.class.getClassLoader()) {
          throw e;
        }
        // The context loader may not see this module (an application server's): try its own loader.
        this.adaptive = AdaptiveCapacityProvider.find(limit, LoadShedder.class.getClassLoader());
      }
      return this;
    }

    /** Full overload held this long before shedding starts (28 s). */
    public Builder delay(Duration delay) {
      this.delay = Objects.requireNonNull(delay, "delay");
      return this;
    }

    /** Shedding moves from none to all at most this fast (120 s). */
    public Builder ramp(Duration ramp) {
      this.ramp = Objects.requireNonNull(ramp, "ramp");
      return this;
    }

    /** What a shed request is told to wait (1 s). */
    public Builder retryAfter(Duration retryAfter) {
      this.retryAfter = Objects.requireNonNull(retryAfter, "retryAfter");
      return this;
    }

    public Builder clock(InstantSource clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /** The draws, uniform in [0, 1): a seeded source makes a test repeatable. */
    public Builder random(DoubleSupplier random) {
      this.random = Objects.requireNonNull(random, "random");
      return this;
    }

    public Builder listener(DecisionListener listener) {
      this.listener = Objects.requireNonNull(listener, "listener");
      return this;
    }

    public LoadShedder build() {
      return new LoadShedder(this);
    }
  }
}
