package dev.sluice.spi;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.concurrent.atomic.AtomicLong;

/** A clock that moves only when told to. Thread-safe. */
public final class FakeClock implements InstantSource {

  private final AtomicLong millis;

  public FakeClock(long startMillis) {
    this.millis = new AtomicLong(startMillis);
  }

  /** Starts at 2026-01-01T00:00:00Z, a whole number of every usual window. */
  public FakeClock() {
    this(Instant.parse("2026-01-01T00:00:00Z").toEpochMilli());
  }

  @Override
  public Instant instant() {
    return Instant.ofEpochMilli(millis.get());
  }

  @Override
  public long millis() {
    return millis.get();
  }

  public void advance(Duration d) {
    millis.addAndGet(d.toMillis());
  }

  public void advanceMillis(long ms) {
    millis.addAndGet(ms);
  }

  public void set(long epochMillis) {
    millis.set(epochMillis);
  }
}
