package dev.sluice.store.memcached;

import java.net.InetSocketAddress;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The offset of memcached's clock from this host's as a {@link MemcachedClock} last measured it,
 * read by every decision, and what operators are told of it: the first offset at INFO, and each
 * offset of a tick that moved with the one it replaces; an offset past {@link #WARN_MILLIS} at
 * WARN, once until the offset is back within it; and, once, a clock still not measured {@link
 * #UNMEASURED_WARN_MILLIS} after start. Written by the clock's steps, one at a time; read by any
 * thread.
 */
final class ClockOffset {

  private static final Logger LOG = LoggerFactory.getLogger(MemcachedClock.class);

  /** An offset past this is logged as a warning: the host's clock is not kept. */
  static final long WARN_MILLIS = 1_000;

  /** Without a measured tick for this long after start, a warning says so once. */
  static final long UNMEASURED_WARN_MILLIS = 60_000;

  private final InetSocketAddress server;
  private final CountDownLatch first = new CountDownLatch(1);
  private volatile long offset;
  private volatile long error = -1;
  private volatile long alignedSecond = -1;

  /** Whether a tick was measured: the offset is then within milliseconds, not half a second. */
  private volatile boolean ticked;

  private boolean warned;
  private boolean unmeasuredWarned;

  ClockOffset(InetSocketAddress server) {
    this.server = server;
  }

  long offset() {
    return offset;
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
   * Takes a measured offset, at the aligned tick of second {@code aligned} or provisional ({@code
   * aligned} -1); logged if it is the first, the measurement of a tick that {@code moved} (a
   * restart or a stall), or past {@link #WARN_MILLIS} again.
   */
  void measured(long measured, long err, long aligned, boolean moved) {
    boolean firstTick = !ticked;
    long was = offset;
    ticked = true;
    offset = measured;
    error = err;
    if (aligned >= 0) {
      alignedSecond = aligned;
    }
    first.countDown();
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
