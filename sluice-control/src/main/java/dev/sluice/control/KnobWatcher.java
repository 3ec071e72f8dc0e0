package dev.sluice.control;

import dev.sluice.engine.LogGate;
import dev.sluice.spi.SharedValues;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the fleet's {@link Knobs} from the store every {@code refresh} (a {@code get} of one small
 * value) and tells its listeners when they change. An instance therefore sees a change within one
 * refresh plus one store round trip.
 *
 * <p>A read that fails (store down, timeout) leaves the last good knobs in force; so does a
 * malformed line, for its own target. Both are logged, at most once a minute. Knobs never expire on
 * their own: they are stored without a time to live. A store that loses its data (a memcached
 * restart, or an eviction under memory pressure) loses them, and every instance goes back to its
 * rules. Thread-safe.
 */
public final class KnobWatcher implements AutoCloseable {

  /** How often the knobs are read unless told otherwise. */
  public static final Duration DEFAULT_REFRESH = Duration.ofSeconds(1);

  private static final Logger LOG = LoggerFactory.getLogger(KnobWatcher.class);
  private static final long LOG_INTERVAL_MILLIS = 60_000;

  private final SharedValues values;
  private final List<Consumer<Knobs>> listeners = new CopyOnWriteArrayList<>();
  private final LogGate failures = new LogGate(LOG_INTERVAL_MILLIS);
  private final LogGate malformed = new LogGate(LOG_INTERVAL_MILLIS);

  /** The periodic read; null for a manual watcher. */
  private final ScheduledFuture<?> task;

  private volatile Knobs current = Knobs.NONE;
  private long version = -1;

  private KnobWatcher(
      SharedValues values, Duration refresh, Optional<ScheduledExecutorService> scheduler) {
    this.values = Objects.requireNonNull(values, "values");
    long ms = checkRefresh(refresh).toMillis();
    refresh();
    this.task =
        scheduler
            .map(s -> s.scheduleWithFixedDelay(this::refresh, ms, ms, TimeUnit.MILLISECONDS))
            .orElse(null);
  }

  /**
   * Reads the knobs now and then every {@code refresh} on {@code scheduler}.
   *
   * @throws IllegalArgumentException if {@code refresh} is not positive
   */
  public static KnobWatcher start(
      SharedValues values, Duration refresh, ScheduledExecutorService scheduler) {
    return new KnobWatcher(values, refresh, Optional.of(scheduler));
  }

  /**
   * A watcher that reads only when {@link #refresh} is called (tests, and callers with a timer).
   */
  public static KnobWatcher manual(SharedValues values) {
    return new KnobWatcher(values, DEFAULT_REFRESH, Optional.empty());
  }

  /**
   * Checks a refresh period.
   *
   * @throws IllegalArgumentException if it is not positive
   */
  public static Duration checkRefresh(Duration refresh) {
    if (refresh.isNegative() || refresh.isZero()) {
      throw new IllegalArgumentException("the knobs' refresh must be positive: " + refresh);
    }
    return refresh;
  }

  /** Tells {@code listener} the knobs now in force, and again each time they change. */
  public void listen(Consumer<Knobs> listener) {
    listeners.add(listener);
    listener.accept(current);
  }

  /** {@return the knobs in force: the last ones read well} */
  public Knobs current() {
    return current;
  }

  /** Reads the knobs now; never throws. */
  public synchronized void refresh() {
    Optional<SharedValues.Versioned> v;
    try {
      v = values.get(Knobs.VALUE_NAME);
    } catch (RuntimeException e) {
      if (failures.tryAcquire(System.currentTimeMillis())) {
        LOG.warn(
            "cannot read the knobs ({}); the last ones read stay in force: {}; logged at most once"
                + " a minute",
            e.toString(),
            current);
      }
      return;
    }
    long seen = v.map(SharedValues.Versioned::version).orElse(0L);
    if (seen == version && seen != 0) {
      return;
    }
    version = seen;
    Knobs next =
        v.map(
                s ->
                    Knobs.parse(
                        s.value(),
                        current,
                        p -> {
                          if (malformed.tryAcquire(System.currentTimeMillis())) {
                            LOG.warn("{}; its last good value stays in force", p);
                          }
                        }))
            .orElse(Knobs.NONE);
    if (!next.equals(current)) {
      LOG.info("knobs changed: {}", next);
      current = next;
      for (Consumer<Knobs> l : listeners) {
        try {
          l.accept(next);
        } catch (RuntimeException e) {
          LOG.warn("a knob listener failed; the knobs stand", e);
        }
      }
    }
  }

  /** Stops reading. */
  @Override
  public void close() {
    if (task != null) {
      task.cancel(false);
    }
  }
}
