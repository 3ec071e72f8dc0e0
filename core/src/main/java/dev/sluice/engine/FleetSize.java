package dev.sluice.engine;

import dev.sluice.Sync;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterUpdate;
import dev.sluice.spi.Counts;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How many instances share the store, for policies whose {@code instances} is {@link
 * Sync#AUTO_INSTANCES}: each instance adds 1 to a heartbeat counter once per {@link #BEAT_MILLIS}
 * window, halfway through it, and reads the fleet's size as the largest of that window's count so
 * far, the previous window's whole count, and the whole count of the window before that (read at
 * its beat of the previous window). When its own beat of the previous window failed, the size it
 * had counted before stands in for what it did not read. So a store cut shorter than one beat (less
 * the spread of the instances' beats) changes no instance's count: every instance that missed a
 * beat missed the same window's, and was counted in the window before it.
 *
 * <p>A new instance is seen by the others within one beat (until then they take their share as if
 * it were not there); an instance that stopped is still counted for up to three beats (the others
 * take a smaller share meanwhile). While the store does not answer, the last count stands: that is
 * when the shares are needed. Until the first answer, an instance counts itself alone.
 *
 * <p>The heartbeat is one counter in the store, {@code (sluice.fleet, instances, 5 s)}: instances
 * that share a store (and its key prefix) are one fleet. {@link #beat} runs in one thread at a time
 * (the scheduler's); {@link #live} may be read from any thread.
 */
final class FleetSize implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(FleetSize.class);

  static final long BEAT_MILLIS = 5_000;
  static final String RULE = "sluice.fleet";
  static final String IDENTITY = "instances";

  /** The most instances a count is trusted to mean; more is read as this many. */
  static final int MAX_INSTANCES = 100_000;

  private final CounterStore store;
  private final InstantSource clock;
  private final ScheduledExecutorService scheduler;
  private final AtomicBoolean started = new AtomicBoolean();
  private final LogGate failures = new LogGate(60_000);
  private volatile int live;

  /** The window of the last beat the store answered; {@link Long#MIN_VALUE} before the first. */
  private long answered = Long.MIN_VALUE;

  /** The previous window's whole count, as that beat read it. */
  private long answeredPrevious;

  private volatile ScheduledFuture<?> next;
  private volatile boolean closed;

  FleetSize(CounterStore store, InstantSource clock, ScheduledExecutorService scheduler) {
    this.store = store;
    this.clock = clock;
    this.scheduler = scheduler;
  }

  /** Starts the heartbeat, once: the first beat at once, then halfway through each window. */
  void start() {
    if (started.compareAndSet(false, true)) {
      next = scheduler.schedule(this::beatAndReschedule, 0, TimeUnit.MILLISECONDS);
    }
  }

  /** {@return the instances counted by the last heartbeat the store answered, at least 1} */
  int live() {
    int n = live;
    return n < 1 ? 1 : n;
  }

  private void beatAndReschedule() {
    if (closed) {
      return;
    }
    long now = clock.millis();
    beat(now);
    long window = Math.floorDiv(now, BEAT_MILLIS);
    long at = (window + 1) * BEAT_MILLIS + BEAT_MILLIS / 2;
    if (!closed) {
      next = scheduler.schedule(this::beatAndReschedule, at - now, TimeUnit.MILLISECONDS);
    }
  }

  /**
   * One heartbeat at {@code now}: counts this instance in its window and reads the fleet's size.
   */
  void beat(long now) {
    long window = Math.floorDiv(now, BEAT_MILLIS);
    try {
      Counts counts =
          store.increment(List.of(new CounterUpdate(RULE, IDENTITY, BEAT_MILLIS, window, 1)));
      long n = Math.max(counts.current(0), counts.previous(0));
      if (answered == window - 1) {
        // The window before the previous one: it counts those whose beat of the previous failed.
        n = Math.max(n, answeredPrevious);
      } else if (answered != Long.MIN_VALUE && answered < window) {
        // This instance's beat of the previous window failed, perhaps with the others': that
        // window's count may lack them, and the size counted before stands in for it.
        n = Math.max(n, live);
      }
      answered = window;
      answeredPrevious = counts.previous(0);
      live = (int) Math.min(MAX_INSTANCES, Math.max(1, n));
    } catch (RuntimeException e) {
      if (failures.tryAcquire(now)) {
        LOG.warn("fleet heartbeat failed; the last count stands ({} instances)", live(), e);
      }
    }
  }

  @Override
  public void close() {
    closed = true;
    ScheduledFuture<?> f = next;
    if (f != null) {
      f.cancel(false);
    }
  }
}
