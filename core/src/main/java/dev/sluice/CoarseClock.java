package dev.sluice;

import java.time.Instant;
import java.time.InstantSource;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The system clock read once a millisecond by one daemon thread, so that a reader pays a volatile
 * read instead of a system call: on a virtual machine, {@link System#currentTimeMillis()} can cost
 * more than the rest of an in-memory decision. It lags the system clock by about a millisecond,
 * more when the machine is so loaded that the thread is not scheduled; it never runs ahead.
 *
 * <p>Give it to a limiter that decides millions of times a second on the in-memory store: {@code
 * RateLimiter.slidingWindow(store).clock(CoarseClock.shared())}. The thread starts on the first
 * call to {@link #shared()} and lives as long as the JVM.
 */
public final class CoarseClock implements InstantSource {

  private static final class Holder {
    static final CoarseClock SHARED = new CoarseClock();
  }

  private volatile long millis = System.currentTimeMillis();

  private CoarseClock() {
    Thread t = new Thread(this::tick, "sluice-coarse-clock");
    t.setDaemon(true);
    t.start();
  }

  /** The clock, its thread started on first use. */
  public static CoarseClock shared() {
    return Holder.SHARED;
  }

  private void tick() {
    while (true) {
      millis = System.currentTimeMillis();
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
    }
  }

  @Override
  public long millis() {
    return millis;
  }

  @Override
  public Instant instant() {
    return Instant.ofEpochMilli(millis);
  }

  @Override
  public String toString() {
    return "CoarseClock[1 ms]";
  }
}
