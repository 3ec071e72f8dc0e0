package dev.sluice.store.memcached;

import java.net.InetSocketAddress;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a {@link MemcachedClock} tells operators: its first offset at INFO; an offset past {@link
 * #WARN_MILLIS} at WARN, once until the offset is back within it; and, once, a clock still not
 * measured {@link #UNMEASURED_WARN_MILLIS} after start. Called from the clock's steps, one at a
 * time.
 */
final class ClockWarnings {

  private static final Logger LOG = LoggerFactory.getLogger(MemcachedClock.class);

  /** An offset past this is logged as a warning: the host's clock is not kept. */
  static final long WARN_MILLIS = 1_000;

  /** Without a measured tick for this long after start, a warning says so once. */
  static final long UNMEASURED_WARN_MILLIS = 60_000;

  private final InetSocketAddress server;
  private volatile boolean warned;
  private boolean unmeasuredWarned;

  ClockWarnings(InetSocketAddress server) {
    this.server = server;
  }

  /** A measured offset: logged if it is the first, or past {@link #WARN_MILLIS} again. */
  void measured(long measured, long err, boolean aligned, boolean firstTick) {
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
            aligned ? "" : ", provisional");
      }
    }
  }

  /** No tick measured yet, {@code sinceStartMillis} after start: warned once past a minute. */
  void unmeasured(long sinceStartMillis, Exception why, long offset) {
    if (!unmeasuredWarned && sinceStartMillis > UNMEASURED_WARN_MILLIS) {
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
