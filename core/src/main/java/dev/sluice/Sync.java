package dev.sluice;

import java.time.Duration;
import java.util.Objects;

/**
 * Two-layer counting for a limit: each instance counts locally and pushes its local delta to the
 * shared store at most once per {@code interval} per counter, reading the fleet's total back in the
 * same round trip. A decision then costs no network round trip, in exchange for a bounded overshoot
 * (docs/RULES.md, "Two-layer counters"). The counting itself is in the {@code sluice-twolayer}
 * module.
 *
 * @param interval how often each counter is synced, at most; at least 1 ms
 * @param instances how many instances share the limit: while the store is down, an instance keeps
 *     counting locally and applies the limit's store-failure setting only once its own count in a
 *     window exceeds {@code limit ÷ instances}; {@link #AUTO_INSTANCES} for the fleet's live count
 */
public record Sync(Duration interval, int instances) {

  /**
   * {@code instances} that follows the fleet's live count: each instance announces itself in the
   * store with a heartbeat every 5 s, and counts the instances that did in the last 10 to 15 s. A
   * new instance is counted by the others within 5 s; one that stopped, for up to 15 s. A store cut
   * shorter than one beat changes no instance's count.
   */
  public static final int AUTO_INSTANCES = -1;

  public Sync {
    Objects.requireNonNull(interval, "interval");
    if (interval.toMillis() < 1) {
      throw new IllegalArgumentException("sync interval must be at least 1 ms: " + interval);
    }
    if (instances < 1 && instances != AUTO_INSTANCES) {
      throw new IllegalArgumentException("instances must be at least 1: " + instances);
    }
  }

  /** Syncs every {@code interval}, one instance assumed during an outage. */
  public static Sync every(Duration interval) {
    return new Sync(interval, 1);
  }
}
