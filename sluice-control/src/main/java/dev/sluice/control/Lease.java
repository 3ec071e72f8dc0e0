package dev.sluice.control;

import dev.sluice.spi.SharedValues;
import java.time.Duration;
import java.util.Optional;

/**
 * Who in the fleet holds a job, kept in the store: a value naming the holder that lives for {@code
 * ttl}. The holder renews it well before it expires; when the holder dies, the value expires and
 * the next instance to ask takes it. Not thread-safe.
 */
final class Lease {

  private final SharedValues values;
  private final String name;
  private final String owner;
  private final Duration ttl;

  Lease(SharedValues values, String name, String owner, Duration ttl) {
    this.values = values;
    this.name = name;
    this.owner = owner;
    this.ttl = ttl;
  }

  /**
   * Takes the lease if it is free, or renews it if this owner holds it.
   *
   * @return whether this owner holds it now
   * @throws RuntimeException if the store cannot answer
   */
  boolean hold() {
    Optional<SharedValues.Versioned> v = values.get(name);
    if (v.isEmpty()) {
      return values.compareAndSet(name, 0, owner, ttl);
    }
    return v.get().value().equals(owner)
        && values.compareAndSet(name, v.get().version(), owner, ttl);
  }

  /** Gives the lease up if this owner holds it, so another can take it at once. */
  void release() {
    Optional<SharedValues.Versioned> v = values.get(name);
    if (v.isPresent() && v.get().value().equals(owner)) {
      // Hand it over: a value that expires in a second is as good as none.
      boolean unused = values.compareAndSet(name, v.get().version(), "", Duration.ofSeconds(1));
    }
  }
}
