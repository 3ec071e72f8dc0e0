package dev.sluice.store.redis;

import dev.sluice.spi.StoreClock;
import io.lettuce.core.ScriptOutputType;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Redis's clock ({@code TIME}, microseconds) measured against this host's: each measurement takes
 * {@value #SAMPLES} readings and keeps the one with the shortest round trip, placing the server's
 * time at its midpoint, so the offset is off by at most half that round trip (a fraction of a
 * millisecond on a LAN). Measured when the store is built and every {@code intervalMillis} after;
 * until the first measurement succeeds it is tried again every second. Between measurements the
 * clock advances the server's time it last measured on this host's monotonic clock ({@link
 * System#nanoTime}), so a step of this host's wall clock does not move it; each measurement
 * corrects what the two drifted apart. Thread-safe.
 */
final class RedisClock implements StoreClock {

  static final int SAMPLES = 5;

  /** An offset past this is warned about once (again after it came back within). */
  static final long WARN_MILLIS = 1_000;

  private static final Logger LOG = LoggerFactory.getLogger(RedisCounterStore.class);

  /** Reads Redis's {@code TIME}: seconds and microseconds, waiting at most the given millis. */
  interface TimeReader {
    long[] read(long waitMillis) throws Exception;
  }

  /**
   * Redis's time at one instant of this host's monotonic clock: what the clock advances from.
   *
   * @param serverMicros Redis's time, microseconds since the epoch
   * @param atNanos this host's monotonic clock ({@link #nanos}) at that instant
   */
  private record Reading(long serverMicros, long atNanos) {}

  private boolean warned;

  private final TimeReader time;
  private final Object server;
  private final InstantSource local;
  private final LongSupplier nanos;
  private final ScheduledFuture<?> task;
  private volatile Reading reading;
  private volatile long offsetMillis;
  private volatile long errorMillis = -1;
  private volatile long last;

  RedisClock(
      Connection connection,
      InstantSource local,
      ScheduledExecutorService scheduler,
      long intervalMillis,
      long firstWaitMillis) {
    this(
        wait -> {
          List<Object> t =
              Script.TIME
                  .<List<Object>>run(connection.commands(), ScriptOutputType.MULTI, new String[0])
                  .get(wait, TimeUnit.MILLISECONDS);
          return new long[] {
            Long.parseLong(t.get(0).toString()), Long.parseLong(t.get(1).toString())
          };
        },
        connection,
        local,
        System::nanoTime,
        scheduler,
        intervalMillis,
        firstWaitMillis);
  }

  /**
   * A clock that reads Redis's time with {@code time}, this host's wall clock from {@code local}
   * (for the offset it reports) and its monotonic clock, in nanoseconds, from {@code nanos}.
   */
  RedisClock(
      TimeReader time,
      Object server,
      InstantSource local,
      LongSupplier nanos,
      ScheduledExecutorService scheduler,
      long intervalMillis,
      long firstWaitMillis) {
    this.time = time;
    this.server = server;
    this.local = local;
    this.nanos = nanos;
    this.last = nanos.getAsLong();
    measure(firstWaitMillis);
    this.task =
        scheduler.scheduleWithFixedDelay(
            () -> {
              if (errorMillis < 0 || due(intervalMillis)) {
                measure(500);
              }
            },
            1_000,
            1_000,
            TimeUnit.MILLISECONDS);
  }

  private boolean due(long intervalMillis) {
    return nanos.getAsLong() - last >= TimeUnit.MILLISECONDS.toNanos(intervalMillis);
  }

  /**
   * Takes the readings, each waiting at most {@code waitMillis}; keeps the old value on failure.
   */
  void measure(long waitMillis) {
    long bestRtt = Long.MAX_VALUE;
    long bestOffset = 0;
    Reading best = null;
    for (int i = 0; i < SAMPLES; i++) {
      try {
        Instant before = local.instant();
        long t0 = nanos.getAsLong();
        long[] t = time.read(waitMillis);
        long rtt = nanos.getAsLong() - t0;
        long serverMicros = t[0] * 1_000_000 + t[1];
        long localMicros = before.getEpochSecond() * 1_000_000 + before.getNano() / 1_000;
        long offset = serverMicros - (localMicros + rtt / 2_000);
        if (rtt < bestRtt) {
          bestRtt = rtt;
          bestOffset = offset;
          best = new Reading(serverMicros, t0 + rtt / 2);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (Exception e) {
        // A reading lost: the others decide, or the next measurement.
      }
    }
    if (best != null) {
      long offset = Math.round(bestOffset / 1_000.0);
      long error = Math.max(1, (bestRtt / 2 + 999_999) / 1_000_000);
      boolean first = errorMillis < 0;
      reading = best;
      offsetMillis = offset;
      errorMillis = error;
      last = nanos.getAsLong();
      if (Math.abs(offset) > WARN_MILLIS) {
        if (!warned) {
          warned = true;
          LOG.warn(
              "this host's clock is {} ms {} redis's ({}, ±{} ms): limits are decided on redis's"
                  + " clock; keep the host's clock synchronised (NTP)",
              Math.abs(offset),
              offset > 0 ? "behind" : "ahead of",
              server,
              error);
        }
      } else {
        warned = false;
      }
      if (first) {
        LOG.info(
            "redis's clock ({}) is {} ms from this host's (±{} ms); limits are decided on it",
            server,
            offset,
            error);
      }
    }
  }

  @Override
  public long offsetMillis() {
    return offsetMillis;
  }

  @Override
  public long errorMillis() {
    return errorMillis;
  }

  /**
   * Redis's time as last measured, advanced on this host's monotonic clock since; {@code host}'s
   * time before the first measurement.
   */
  @Override
  public long millis(InstantSource host) {
    Reading r = reading;
    if (r == null) {
      return host.millis();
    }
    return Math.floorDiv(r.serverMicros() + (nanos.getAsLong() - r.atNanos()) / 1_000, 1_000);
  }

  void close() {
    task.cancel(false);
  }

  @Override
  public String toString() {
    return "redis's clock at " + server + " (" + offsetMillis + " ms ±" + errorMillis + ")";
  }
}
