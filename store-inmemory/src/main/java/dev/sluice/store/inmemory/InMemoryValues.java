package dev.sluice.store.inmemory;

import dev.sluice.spi.SharedValues;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicLong;

/** Shared values in this JVM: the knobs and leases of a single instance. Thread-safe. */
final class InMemoryValues implements SharedValues {

  private record Entry(String value, long version, long expiresAt) {}

  private final ConcurrentMap<String, Entry> values = new ConcurrentHashMap<>();
  private final AtomicLong versions = new AtomicLong();
  private final InstantSource clock;

  InMemoryValues(InstantSource clock) {
    this.clock = clock;
  }

  @Override
  public Optional<Versioned> get(String name) {
    return live(name).map(e -> new Versioned(e.value, e.version));
  }

  @Override
  public boolean compareAndSet(String name, long version, String value, Duration ttl) {
    long now = clock.millis();
    Entry next =
        new Entry(
            value,
            versions.incrementAndGet(),
            ttl.isZero() ? Long.MAX_VALUE : now + ttl.toMillis());
    boolean[] done = {false};
    values.compute(
        name,
        (k, e) -> {
          long current = e == null || e.expiresAt <= now ? 0 : e.version;
          if (current != version) {
            return e;
          }
          done[0] = true;
          return next;
        });
    return done[0];
  }

  private Optional<Entry> live(String name) {
    Entry e = values.get(name);
    return e == null || e.expiresAt <= clock.millis() ? Optional.empty() : Optional.of(e);
  }
}
