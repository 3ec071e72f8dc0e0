package dev.sluice.engine;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Lets one log line through per interval of the given clock readings, so a log cannot flood. A
 * bridge: public for {@code dev.sluice.control} and {@code dev.sluice.twolayer}; not part of the
 * API.
 */
public final class LogGate {

  private final long intervalMillis;

  /** When the last caller went through; 0 for never, so the first always goes. */
  private final AtomicLong last = new AtomicLong();

  public LogGate(long intervalMillis) {
    this.intervalMillis = intervalMillis;
  }

  /** Whether this caller, at {@code now}, is the one let through for the current interval. */
  public boolean tryAcquire(long now) {
    long before = last.get();
    return (before == 0 || now - before >= intervalMillis) && last.compareAndSet(before, now);
  }
}
