package dev.sluice.store.memcached;

import java.net.InetSocketAddress;
import java.time.InstantSource;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Memcached's clock as a {@link MemcachedClock} last measured it, read by every decision: its
 * offset from this host's monotonic clock ({@link Monotonic}), on which it advances between
 * measurements, and its offset from this host's wall clock at the measurement, which is what
 * operators are told of: the first offset at INFO, and each offset of a tick that moved with the
 * one it replaces; an offset past {@link #WARN_MILLIS} at WARN, once until the offset is back
 * within it; and, once, a clock still not measured {@link #UNMEASURED_WARN_MILLIS} after start.
 * Written by the clock's steps, one at a time; read by any thread.
 */
final class ClockOffset {

  private static final Logger LOG = LoggerFactory.getLogger(MemcachedClock.class);

  /** An offset past this is logged as a warning: the host's clock is not kept. */
  static final long WARN_MILLIS = 1_000;

  /** Without a measured tick for this long after start, a warning says so once. */
  static final long UNMEASURED_WARN_MILLIS = 60_000;

  private final InetSocketAddress server;
  private final InstantSource wall;
  private final Monotonic monotonic;
  private final CountDownLatch first = new CountDownLatch(1);

  /** Memcached's time minus the monotonic clock's; meaningful once {@link #error} is not -1. */
  private volatile long frameOffset;

  /** Memcached's time minus the wall clock's, at the last measurement. */
  private volatile long offset;

  private volatile long error = -1;
  private volatile long alignedSecond = -1;

  /** Whether a tick was measured: the offset is then within milliseconds, not half a second. */
  private volatile boolean ticked;

  private boolean warned;
  private boolean unmeasuredWarned;

  ClockOffset(InetSocketAddress server, InstantSource wall, Monotonic monotonic) {
    this.server = server;
    this.wall = wall;
    this.monotonic = monotonic;
  }

  /** Memcached's time minus this host's wall clock's, as last measured. */
  long offset() {
    return offset;
  }

  /**
   * Memcached's time now: the monotonic clock plus the last measured offset from it; {@code host}'s
   * time before the first measurement.
   */
  long millis(InstantSource host) {
    if (error < 0) {
      return host.millis();
    }
    return monotonic.millis() + frameOffset;
  }

  /** The measurement's error, or -1 before the first. */
  long error() {
    return error;
  }

  /** The aligned second last measured at, or -1 before the first aligned measurement. */
  long alignedSecond() {
    return alignedSecond;
  }

  boolean ticked() {
    return ticked;
  }

  /** Waits up to {@code millis} for the first measured tick. */
  void awaitFirst(long millis) {
    try {
      if (!first.await(millis, TimeUnit.MILLISECONDS)) {
        LOG.debug("memcached's clock at {} not measured within {} ms of start", server, millis);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Takes a measured offset from the monotonic clock, at the aligned tick of second {@code aligned}
   * or provisional ({@code aligned} -1); logged, as an offset from the wall clock, if it is the
   * first, the measurement of a tick that {@code moved} (a restart or a stall), or past {@link
   * #WARN_MILLIS} again.
   */
  void measured(long fromMonotonic, long err, long aligned, boolean moved) {
    boolean firstTick = !ticked;
    long was = offset;
    long measured = fromMonotonic + monotonic.millis() - wall.millis();
    long stepped = (was - measured) - (frameOffset - fromMonotonic);
    ticked = true;
    frameOffset = fromMonotonic;
    offset = measured;
    error = err;
    if (aligned >= 0) {
      alignedSecond = aligned;
    }
    first.countDown();
    if (!firstTick && Math.abs(stepped) > WARN_MILLIS) {
      LOG.info(
          "this host's clock moved {} ms against its monotonic clock since memcached's ({}) was"
              + " last measured (a step): limits are decided on memcached's clock, which it did not"
              + " move",
          stepped,
          server);
    }
    if (moved && !firstTick) {
      LOG.info(
          "memcached's clock ({}) is now {} ms from this host's, was {} (±{} ms{}); limits are"
              + " decided on it",
          server,
          measured,
          was,
          err,
          aligned >= 0 ? "" : ", provisional");
    }
    if (Math.abs(measured) > WARN_MILLIS) {
      if (!warned) {
        warned = true;
        LOG.warn(
            "this host's clock is {} ms {} memcached's ({}, ±{} ms): limits are decided on"
                + " memcached's clock; keep the host's clock synchronised (NTP)",
            Math.abs(measured),
            measured > 0 ? "behind" : "ahead of",
            server,
            err);
      }
    } else {
      warned = false;
      if (firstTick) {
        LOG.info(
            "memcached's clock ({}) is {} ms from this host's (±{} ms{}); limits are decided on it",
            server,
            measured,
            err,
            aligned >= 0 ? "" : ", provisional");
      }
    }
  }

  /** A measurement failed {@code sinceStartMillis} after start: warned once past a minute. */
  void failed(long sinceStartMillis, Exception why) {
    if (!ticked && !unmeasuredWarned && sinceStartMillis > UNMEASURED_WARN_MILLIS) {
      unmeasuredWarned = true;
      LOG.warn(
          "memcached's clock at {} has not been measured for a minute ({}): limits are decided"
              + " on this host's clock, corrected by {} ms, until it is",
          server,
          why.toString(),
          offset);
    }
  }
}
