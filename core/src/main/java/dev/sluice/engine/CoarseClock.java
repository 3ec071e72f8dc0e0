package dev.sluice.engine;

import java.time.Instant;
import java.time.InstantSource;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The system clock read once a millisecond by one daemon thread, so that a reader pays a volatile
 * read instead of a system call: on a virtual machine, {@link System#currentTimeMillis()} costs
 * about 25 ns, more than the rest of an in-memory decision. It lags the system clock by about a
 * millisecond, more when the machine is so loaded that the thread is not scheduled; it never runs
 * ahead of it.
 *
 * <p>Key limiters and throttles read it unless given another clock ({@code .clock(…)} on the
 * builder); HTTP rules read the system clock, since a server's requests come too seldom for the
 * thread's wake-ups (some 1,000 a second) to pay for themselves. The thread starts on the first
 * read and stops after about a second without one (the read that finds it stopped reads the system
 * clock and starts it again), so an application that stops deciding, or a web application that is
 * undeployed, keeps no thread of it.
 */
public final class CoarseClock implements InstantSource {

  private static final CoarseClock SHARED = new CoarseClock(1_000, CoarseClock::daemon);

  /** {@link #millis} while no thread ticks. */
  private static final long STOPPED = Long.MIN_VALUE;

  private final int idleTicks;
  private final java.util.function.Consumer<Runnable> starter;
  private volatile long millis = STOPPED;

  /** Whether a reader came since the last tick. */
  private volatile boolean read;

  /** Ticks in a row without a reader; the ticking thread's alone. */
  private int idle;

  /**
   * A clock whose ticking stops after {@code idleTicks} ticks without a read, started by {@code
   * starter} (a daemon thread, or a test's hand).
   */
  CoarseClock(int idleTicks, java.util.function.Consumer<Runnable> starter) {
    this.idleTicks = idleTicks;
    this.starter = starter;
  }

  /** {@return the clock key limiters and throttles read by default} */
  public static CoarseClock shared() {
    return SHARED;
  }

  @Override
  public long millis() {
    long m = millis;
    if (m == STOPPED) {
      return start();
    }
    if (!read) {
      read = true;
    }
    return m;
  }

  /** Reads the system clock, and starts the thread unless another reader just did. */
  private long start() {
    long now = System.currentTimeMillis();
    synchronized (this) {
      if (millis == STOPPED) {
        millis = now;
        read = true;
        idle = 0;
        starter.accept(this::run);
      }
    }
    return now;
  }

  private static void daemon(Runnable ticking) {
    Thread t = new Thread(ticking, "sluice-coarse-clock");
    t.setDaemon(true);
    // No application's class loader stays reachable from the thread.
    t.setContextClassLoader(null);
    t.start();
  }

  private void run() {
    do {
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
    } while (tick());
  }

  /**
   * One tick: reads the system clock, unless no reader came for {@code idleTicks} ticks; then it
   * stops, and returns false.
   */
  boolean tick() {
    if (read) {
      read = false;
      idle = 0;
    } else if (++idle >= idleTicks) {
      synchronized (this) {
        if (!read) {
          millis = STOPPED;
          return false;
        }
      }
      idle = 0;
    }
    millis = System.currentTimeMillis();
    return true;
  }

  /** Whether the clock is ticking; for tests. */
  boolean ticking() {
    return millis != STOPPED;
  }

  @Override
  public Instant instant() {
    return Instant.ofEpochMilli(millis());
  }

  @Override
  public String toString() {
    return "CoarseClock[1 ms]";
  }
}
