package dev.sluice.store.memcached;

import dev.sluice.spi.StoreClock;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.InstantSource;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Memcached's clock, measured against this host's. Memcached tells its time in whole seconds
 * ({@code stats}: {@code time}); its second ticks over at one instant for everyone who asks, so
 * asking until it does places that instant within a round trip. Its ticks drift against true time
 * by a few milliseconds a second (its timer re-arms after it runs), so the instances of a fleet
 * measure the same tick: the one into each second that is a multiple of {@link #ALIGN_SECONDS}.
 * Each then reads memcached's time at that one instant advanced on its host's monotonic clock
 * ({@link Monotonic}), so a step of the host's wall clock moves neither the store's clock nor the
 * ticks it watches, and the fleet agrees to within its measurements' errors (a round trip and the
 * clock's granularity: 1 to 3 ms on loopback) plus what the hosts' clocks drift in a minute,
 * whatever their clocks say. Memcached's clock may be up to a second or two off true time; that
 * moves every window alike and costs nothing.
 *
 * <p>Every store of this JVM on the same first server and host clock shares one measurement, so the
 * instances an application runs in one process decide on the very same offset. A store waits at its
 * start for the first tick (within about a second), which gives a provisional offset (within about
 * 5 ms of the aligned one, plus memcached's drift since the last aligned tick); the aligned
 * measurement follows within a minute. With several servers, the clock is the first one's in {@code
 * host:port} order, so every instance configured with the same servers reads the same one. The work
 * runs in short steps on the store's scheduler over one connection of its own: a {@code stats}
 * every 10 ms for about 300 ms, then every 0.1 ms for at most 80 ms around the aligned tick, once a
 * minute. A measurement that fails keeps the last offset and is tried again {@link #RETRY_MILLIS}
 * later ({@link #MOVED_RETRY_MILLIS} when the tick moved, below).
 *
 * <p>A memcached's tick can move while it runs (started again, stalled, or skipping a second as its
 * timer drifts), and then a fleet must not decide on two clocks for long: between measurements a
 * {@link TickWatch} watches every tick, and a moved one is measured at once, provisionally, as a
 * first one is. Thread-safe.
 */
final class MemcachedClock implements StoreClock {

  private static final Logger LOG = LoggerFactory.getLogger(MemcachedClock.class);

  /** Every instance measures the tick into each second that is a multiple of this. */
  static final int ALIGN_SECONDS = 60;

  static final long RETRY_MILLIS = 5_000;

  /**
   * A measurement of a moved tick that failed is tried again this soon, for as long as it fails: a
   * memcached frozen or cut off again before the move was measured is measured within a second or
   * two of answering again, however long it was gone.
   */
  static final long MOVED_RETRY_MILLIS = 500;

  /**
   * A tick further than this from where the last ones were is a moved one: the clock is measured
   * again. It covers the watch's error (a poll interval) and more than a second's drift.
   */
  static final long MOVED_MILLIS = 30;

  /** Between coarse polls: a tick is placed within this. */
  private static final long COARSE_POLL_MILLIS = 10;

  /** How long before the tick before an aligned one the coarse polling starts. */
  private static final long COARSE_LEAD_MILLIS = 300;

  /**
   * How long before (and after) the expected aligned tick the fine polling runs: room for a late
   * scheduler thread and for memcached's drift since the tick before.
   */
  private static final long FINE_LEAD_MILLIS = 40;

  /** Between fine polls, so that they place the tick within a fraction of a millisecond. */
  private static final long FINE_PAUSE_NANOS = 100_000;

  private final InetSocketAddress server;

  /** This host's monotonic clock, which ticks are placed on and the store's clock advances on. */
  private final Monotonic local;

  private final int timeoutMillis;
  private final int align;
  private final ClockOffset measured;
  private final ReentrantLock steps = new ReentrantLock();
  private long startedAt;
  private volatile boolean stopped;
  private volatile ScheduledFuture<?> task;
  private ScheduledExecutorService scheduler;

  // A measurement's state: read and written by its steps only, which run one after another.
  private StatsProbe probe;
  private StatsProbe checker;

  /** The memcached process the offset was measured on ({@code pid:start}); null before. */
  private String measuredOn;

  /**
   * The process or its tick moved: the next tick is recorded, provisional, as a first one is.
   * Volatile for {@link #measuringMove}; written only in the clock's steps.
   */
  private volatile boolean moved;

  /**
   * Whether a reading of a moved tick was passed over, one of its reads held up (by a stall that
   * ended during it, say): the next tick is recorded whatever its reading.
   */
  private boolean passedOver;

  /** Whether the read that last saw the old second (at {@link #before}) took over a poll. */
  private boolean heldUp;

  /** Where the next tick is expected, between measurements. */
  private final TickWatch watch = new TickWatch(COARSE_POLL_MILLIS);

  /** When the next measurement starts, on the host's clock; checks run until then. */
  private long nextMeasureAt;

  private boolean fine;
  private long second;
  private long before;
  private long tickLocal;
  private long deadline;

  MemcachedClock(
      List<InetSocketAddress> servers, InstantSource wall, int timeoutMillis, int alignSeconds) {
    this(servers, wall, System::nanoTime, timeoutMillis, alignSeconds);
  }

  /**
   * A clock of {@code servers}' first server, reporting its offset from {@code wall} and advancing
   * on {@code nanos}, this host's monotonic clock in nanoseconds.
   */
  MemcachedClock(
      List<InetSocketAddress> servers,
      InstantSource wall,
      LongSupplier nanos,
      int timeoutMillis,
      int alignSeconds) {
    this.server =
        servers.stream()
            .min(Comparator.comparing(a -> a.getHostString() + ":" + a.getPort()))
            .orElseThrow();
    this.local = new Monotonic(wall, nanos);
    this.timeoutMillis = timeoutMillis;
    this.align = alignSeconds;
    this.measured = new ClockOffset(server, wall, local);
  }

  @Override
  public long offsetMillis() {
    return measured.offset();
  }

  @Override
  public long errorMillis() {
    return measured.error();
  }

  @Override
  public long millis(InstantSource host) {
    return measured.millis(host);
  }

  /** The aligned second last measured at, or -1 before the first aligned measurement. */
  long alignedSecond() {
    return measured.alignedSecond();
  }

  /** The server measured: the first of the servers in {@code host:port} order. */
  InetSocketAddress server() {
    return server;
  }

  /** Starts measuring on {@code scheduler}: a first step at once. */
  void start(ScheduledExecutorService scheduler) {
    this.scheduler = scheduler;
    this.startedAt = local.millis();
    schedule(0);
  }

  /** Waits up to {@code millis} for the first measured tick. */
  void awaitFirst(long millis) {
    measured.awaitFirst(millis);
  }

  /** Stops measuring, and closes the connection a measurement under way holds. */
  void stop() {
    stopped = true;
    Optional.ofNullable(task).ifPresent(t -> t.cancel(false));
    steps.lock(); // a step under way ends within its connection's timeout
    try {
      closeProbe();
      closeChecker();
    } finally {
      steps.unlock();
    }
  }

  private void schedule(long delayMillis) {
    if (!stopped) {
      try {
        task = scheduler.schedule(this::step, Math.max(0, delayMillis), TimeUnit.MILLISECONDS);
      } catch (RejectedExecutionException e) {
        LOG.debug("memcached's clock is not measured: the scheduler is shut down", e);
      }
    }
  }

  /**
   * One step, each a short task: open a connection and read the second; poll every {@link
   * #COARSE_POLL_MILLIS} until it ticks over; when the next tick is an aligned one, poll back to
   * back around it and take the offset from it; else come back just before the tick before the next
   * aligned one.
   */
  private void step() {
    steps.lock();
    try {
      stepLocked();
    } finally {
      steps.unlock();
    }
  }

  private void stepLocked() {
    if (stopped) {
      closeProbe();
      closeChecker();
      return;
    }
    try {
      if (probe == null && measured.ticked() && local.millis() < nextMeasureAt) {
        try {
          check();
        } catch (IOException | RuntimeException e) {
          // The server is down, stalled or being started again: watch the next tick, on a new
          // connection.
          closeChecker();
          watch.restart();
          LOG.debug("memcached at {} did not answer a check of its clock", server, e);
          scheduleCheck();
        }
      } else if (probe == null) {
        probe = StatsProbe.open(server, timeoutMillis);
        before = local.millis();
        second = probe.time();
        heldUp = local.millis() - before > COARSE_POLL_MILLIS;
        fine = false;
        deadline = before + 2_500;
        schedule(COARSE_POLL_MILLIS);
      } else if (!fine) {
        coarse();
      } else {
        long tickAt = fine();
        closeProbe();
        // Back just before the tick before the next aligned one.
        measureAt(tickAt + (align - 1) * 1000L - COARSE_LEAD_MILLIS);
      }
    } catch (IOException | RuntimeException e) {
      closeProbe();
      closeChecker();
      nextMeasureAt = 0;
      LOG.debug("memcached's clock at {} not measured", server, e);
      measured.failed(local.millis() - startedAt, e);
      passedOver = false;
      // A tick that moved is measured again as soon as the server answers (a stall may have
      // ended), so that the fleet does not decide on two phases for long.
      schedule(moved ? MOVED_RETRY_MILLIS : RETRY_MILLIS);
    }
  }

  /** One coarse poll: on a tick, the provisional offset, and the way to the aligned tick. */
  private void coarse() throws IOException {
    long b = local.millis();
    long now = probe.time();
    long a = local.millis();
    if (now == second) {
      if (a > deadline) {
        throw new IOException("memcached's second did not tick over in time");
      }
      before = b;
      heldUp = a - b > COARSE_POLL_MILLIS;
      schedule(COARSE_POLL_MILLIS);
      return;
    }
    tickLocal = (before + a) / 2;
    second = now;
    // Placed within a poll or two: good enough to judge the tick, and to expect the next from it.
    boolean narrow = a - before <= 2 * COARSE_POLL_MILLIS;
    if (measuredOn != null && !measuredOn.equals(probe.process())) {
      moved = true;
    } else if (measured.ticked() && !moved && narrow && watch.offExpected(now, tickLocal)) {
      // Moved while nothing watched: a failed measurement's retry, or a stall across it.
      LOG.info(
          "memcached's clock at {} ticked to second {} (expected {}) {} ms from where expected:"
              + " measuring it again",
          server,
          now,
          watch.secondNear(tickLocal),
          watch.fromNearest(tickLocal));
      moved = true;
    }
    if (moved && !narrow && !passedOver && (heldUp || a - b > COARSE_POLL_MILLIS)) {
      // A read held up by a stall that ended during it answers at the thaw, the new phase's first
      // tick, which the reading would place anywhere in its span: place the next tick instead (when
      // that is the aligned one, coarsely, and the fine measurement waits for the next aligned).
      passedOver = true;
      before = b;
      heldUp = false;
      deadline = a + 2_500;
      schedule(COARSE_POLL_MILLIS);
      return;
    }
    if (!measured.ticked() || moved) {
      record(now * 1000 - tickLocal, (a - before + 1) / 2 + 1, -1, moved);
      moved = false;
      watch.expect(now, tickLocal);
    } else if (narrow) {
      watch.expect(now, tickLocal);
    }
    if ((now + 1) % align == 0) {
      fine = true;
      schedule(tickLocal + 1000 - FINE_LEAD_MILLIS - local.millis());
      return;
    }
    closeProbe();
    long aligned = (now / align + 1) * align;
    measureAt(tickLocal + (aligned - 1 - now) * 1000 - COARSE_LEAD_MILLIS);
  }

  /** Measures next at {@code localMillis}, watching the ticks until then. */
  private void measureAt(long localMillis) {
    nextMeasureAt = localMillis;
    watch.restart();
    scheduleCheck();
  }

  /** Schedules the watch of the next tick expected (or the measurement, when that comes first). */
  private void scheduleCheck() {
    long now = local.millis();
    schedule(Math.min(watch.nextRead(now), nextMeasureAt) - now);
  }

  /**
   * Between measurements, one read of the watch: which process the server is, and whether its
   * second ticks over within {@link #MOVED_MILLIS} of where it is expected. When either changed,
   * measures its clock now (the next tick gives a provisional offset).
   */
  private void check() throws IOException {
    if (checker == null) {
      checker = StatsProbe.open(server, timeoutMillis);
    }
    long b = local.millis();
    long now = checker.time();
    long a = local.millis();
    if (measuredOn != null && !measuredOn.equals(checker.process())) {
      LOG.info(
          "memcached at {} was started again ({} is now {}): measuring its clock again",
          server,
          measuredOn,
          checker.process());
      measureAgain(b, now, a);
    } else {
      switch (watch.read(b, now, a)) {
        case NOT_YET -> schedule(COARSE_POLL_MILLIS);
        case NEXT -> scheduleCheck();
        case MOVED -> {
          LOG.info(
              "memcached's clock at {} ticked {} (it stalled, or its timer slipped a second):"
                  + " measuring it again",
              server,
              watch.how());
          measureAgain(b, now, a);
        }
      }
    }
  }

  /**
   * Measures the clock from the next tick after second {@code now}, read between {@code b} and
   * {@code a}.
   */
  private void measureAgain(long b, long now, long a) {
    moved = true;
    watch.restart();
    probe = checker;
    checker = null;
    before = b;
    second = now;
    heldUp = a - b > COARSE_POLL_MILLIS;
    fine = false;
    deadline = b + 2_500;
    schedule(COARSE_POLL_MILLIS);
  }

  /**
   * Polls every 0.1 ms around the expected aligned tick, records the offset from it, and returns
   * the local time of the tick.
   */
  private long fine() throws IOException {
    long last = local.millis();
    long first = probe.time();
    if (first != second) {
      throw new IOException(
          String.format(
              "late for memcached's tick: read %d not %d at %d, the tick before at %d",
              first, second, last, tickLocal));
    }
    StatsProbe.Tick t =
        probe.nextTick(local, second, tickLocal + 1000 + FINE_LEAD_MILLIS, FINE_PAUSE_NANOS, last);
    record(t.second() * 1000 - t.localMillis(), t.errorMillis(), t.second(), false);
    watch.expect(t.second(), t.localMillis());
    return t.localMillis();
  }

  /** Takes a measured offset ({@link ClockOffset#measured}), on the process probed. */
  private void record(long offset, long err, long aligned, boolean ofMove) {
    passedOver = false;
    measuredOn = probe.process();
    measured.measured(offset, err, aligned, ofMove);
  }

  private void closeProbe() {
    if (probe != null) {
      probe.close();
      probe = null;
    }
  }

  private void closeChecker() {
    if (checker != null) {
      checker.close();
      checker = null;
    }
  }

  /** Whether a moved tick is being measured, for tests. */
  boolean measuringMove() {
    return moved;
  }

  @Override
  public String toString() {
    return "memcached's clock at %s (%d ms ±%d)".formatted(server, offsetMillis(), errorMillis());
  }
}
