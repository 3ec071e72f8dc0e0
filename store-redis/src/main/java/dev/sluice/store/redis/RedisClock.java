package dev.sluice.store.redis;

import dev.sluice.spi.StoreClock;
import io.lettuce.core.ScriptOutputType;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Redis's clock ({@code TIME}, microseconds) measured against this host's: each measurement takes
 * {@value #SAMPLES} readings and keeps the one with the shortest round trip, placing the server's
 * time at its midpoint, so the offset is off by at most half that round trip (a fraction of a
 * millisecond on a LAN). Measured when the store is built and every {@code intervalMillis} after;
 * until the first measurement succeeds it is tried again every second. Thread-safe.
 */
final class RedisClock implements StoreClock {

  static final int SAMPLES = 5;

  /** An offset past this is warned about once (again after it came back within). */
  static final long WARN_MILLIS = 1_000;

  private static final Logger LOG = LoggerFactory.getLogger(RedisCounterStore.class);

  private boolean warned;

  private final Connection connection;
  private final InstantSource local;
  private final ScheduledFuture<?> task;
  private volatile long offsetMillis;
  private volatile long errorMillis = -1;

  RedisClock(
      Connection connection,
      InstantSource local,
      ScheduledExecutorService scheduler,
      long intervalMillis,
      long firstWaitMillis) {
    this.connection = connection;
    this.local = local;
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

  private volatile long last = System.nanoTime();

  private boolean due(long intervalMillis) {
    return System.nanoTime() - last >= TimeUnit.MILLISECONDS.toNanos(intervalMillis);
  }

  /**
   * Takes the readings, each waiting at most {@code waitMillis}; keeps the old value on failure.
   */
  void measure(long waitMillis) {
    long bestRtt = Long.MAX_VALUE;
    long bestOffset = 0;
    for (int i = 0; i < SAMPLES; i++) {
      try {
        Instant before = local.instant();
        long t0 = System.nanoTime();
        List<Object> t =
            Script.TIME
                .<List<Object>>run(connection.commands(), ScriptOutputType.MULTI, new String[0])
                .get(waitMillis, TimeUnit.MILLISECONDS);
        long rtt = System.nanoTime() - t0;
        long serverMicros =
            Long.parseLong(t.get(0).toString()) * 1_000_000 + Long.parseLong(t.get(1).toString());
        long localMicros = before.getEpochSecond() * 1_000_000 + before.getNano() / 1_000;
        long offset = serverMicros - (localMicros + rtt / 2_000);
        if (rtt < bestRtt) {
          bestRtt = rtt;
          bestOffset = offset;
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (Exception e) {
        // A reading lost: the others decide, or the next measurement.
      }
    }
    if (bestRtt != Long.MAX_VALUE) {
      long offset = Math.round(bestOffset / 1_000.0);
      long error = Math.max(1, (bestRtt / 2 + 999_999) / 1_000_000);
      boolean first = errorMillis < 0;
      offsetMillis = offset;
      errorMillis = error;
      last = System.nanoTime();
      if (Math.abs(offset) > WARN_MILLIS) {
        if (!warned) {
          warned = true;
          LOG.warn(
              "this host's clock is {} ms {} redis's ({}, ±{} ms): limits are decided on redis's"
                  + " clock; keep the host's clock synchronised (NTP)",
              Math.abs(offset),
              offset > 0 ? "behind" : "ahead of",
              connection,
              error);
        }
      } else {
        warned = false;
      }
      if (first) {
        LOG.info(
            "redis's clock ({}) is {} ms from this host's (±{} ms); limits are decided on it",
            connection,
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

  void close() {
    task.cancel(false);
  }
}
