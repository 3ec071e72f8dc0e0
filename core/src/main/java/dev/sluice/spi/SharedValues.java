package dev.sluice.spi;

import java.time.Duration;
import java.util.Optional;

/**
 * Small named values every instance of a fleet sees: the knobs, and leases. Each value carries a
 * version, and a write names the version it replaces, so two writers never lose each other's change
 * (memcached's {@code gets}/{@code cas}). Implementations are thread-safe; one that cannot answer
 * throws.
 */
public interface SharedValues {

  /** A value and the version a {@link #compareAndSet} must name to replace it. */
  record Versioned(String value, long version) {}

  /** The value stored under {@code name}, or empty if there is none (never set, or expired). */
  Optional<Versioned> get(String name);

  /**
   * Stores {@code value} under {@code name} if the value there is still at {@code version}, or, for
   * {@code version} 0, if there is none.
   *
   * @param ttl how long the value lives; {@link Duration#ZERO} for as long as the store keeps it
   * @return false if another writer got there first (read again and retry)
   */
  boolean compareAndSet(String name, long version, String value, Duration ttl);
}
