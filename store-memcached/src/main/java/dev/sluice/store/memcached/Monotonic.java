package dev.sluice.store.memcached;

import java.time.Instant;
import java.time.InstantSource;
import java.util.function.LongSupplier;

/**
 * This host's monotonic clock in the wall clock's units: the wall clock's reading when it was made,
 * advanced since on {@code nanos} ({@link System#nanoTime}). A step of the wall clock (NTP setting
 * it, an operator) does not move it; it drifts from the wall clock only as the two run at different
 * rates. Memcached's clock is measured, and its ticks watched, on it. Thread-safe.
 */
final class Monotonic implements InstantSource {

  private final long startMillis;
  private final long startNanos;
  private final LongSupplier nanos;

  Monotonic(InstantSource wall, LongSupplier nanos) {
    this.nanos = nanos;
    this.startNanos = nanos.getAsLong();
    this.startMillis = wall.millis();
  }

  @Override
  public long millis() {
    return startMillis + Math.floorDiv(nanos.getAsLong() - startNanos, 1_000_000L);
  }

  @Override
  public Instant instant() {
    return Instant.ofEpochMilli(startMillis).plusNanos(nanos.getAsLong() - startNanos);
  }

  @Override
  public String toString() {
    return "this host's monotonic clock";
  }
}
