package dev.sluice;

import java.util.concurrent.ConcurrentHashMap;

/**
 * Identities known to be over a limit, each until the instant it may pass again. Bounded: when
 * full, expired entries are swept (at most once per {@value #SWEEP_INTERVAL_MILLIS} ms of the
 * limiter's clock) and a new denial that still does not fit is simply not cached, which costs a
 * store call later and never a wrong answer. Thread-safe.
 */
final class DenyCache {

  static final long SWEEP_INTERVAL_MILLIS = 100;

  /** Why and until when an identity is denied. */
  record Denial(long untilMillis, int tier, long used, long resetAtMillis) {}

  private final ConcurrentHashMap<String, Denial> map = new ConcurrentHashMap<>();
  private final int capacity;

  /**
   * False once anything was cached: the allow path then reads one field instead of asking the map
   * whether it is empty. Set back when a sweep empties the map.
   */
  private volatile boolean empty = true;

  private volatile boolean swept;
  private volatile long lastSweep;

  DenyCache(int capacity) {
    this.capacity = capacity;
  }

  /** The denial in force for {@code identity} at {@code now}, or null. */
  Denial get(String identity, long now) {
    if (empty) {
      // The usual state while nobody is over a limit: no hash lookup on the allow path.
      return null;
    }
    Denial d = map.get(identity);
    if (d == null) {
      return null;
    }
    if (d.untilMillis <= now) {
      map.remove(identity, d);
      return null;
    }
    return d;
  }

  void put(String identity, Denial denial, long now) {
    if (map.size() >= capacity) {
      sweep(now);
      if (map.size() >= capacity) {
        return;
      }
    }
    empty = false;
    map.merge(identity, denial, (a, b) -> a.untilMillis >= b.untilMillis ? a : b);
  }

  private void sweep(long now) {
    if (swept && now - lastSweep < SWEEP_INTERVAL_MILLIS) {
      return;
    }
    swept = true;
    lastSweep = now;
    map.values().removeIf(d -> d.untilMillis <= now);
    if (map.isEmpty()) {
      empty = true;
      if (!map.isEmpty()) {
        // A put raced the check: its flag write may have come before ours. (One that lands after
        // this check goes unseen until the next put: a store call, never a wrong answer.)
        empty = false;
      }
    }
  }

  int capacity() {
    return capacity;
  }

  int size() {
    return map.size();
  }
}
