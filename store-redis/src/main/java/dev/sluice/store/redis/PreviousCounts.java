package dev.sluice.store.redis;

import java.util.concurrent.ConcurrentHashMap;

/**
 * The count of each counter's last window read, by the counter's key without its window; cleared
 * whole when full (refilled by one get each). One entry per counter, not per window: the table
 * stays as small as the set of active clients, and a lookup stays in cache. Thread-safe.
 */
final class PreviousCounts {

  /** The count of window {@code window} of a counter, which has ended. */
  private record Count(long window, long count) {}

  /** {@link #get} of a window this table does not know. */
  static final long UNKNOWN = -1;

  private final int capacity;
  private final ConcurrentHashMap<String, Count> counts = new ConcurrentHashMap<>();

  PreviousCounts(int capacity) {
    this.capacity = capacity;
  }

  /** The count of counter {@code name}'s window {@code window}, or {@link #UNKNOWN}. */
  long get(String name, long window) {
    Count c = counts.get(name);
    return c != null && c.window() == window ? c.count() : UNKNOWN;
  }

  void put(String name, long window, long count) {
    counts.put(name, new Count(window, count));
  }

  /** Clears the table when {@code adding} more entries would pass its capacity. */
  void makeRoom(int adding) {
    if (counts.size() + adding > capacity) {
      counts.clear();
    }
  }
}
