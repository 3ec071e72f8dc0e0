package dev.sluice.store.memcached;

import java.net.InetSocketAddress;
import java.time.InstantSource;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;

/**
 * The {@link MemcachedClock}s this JVM measures: one per memcached server, host clock and
 * alignment, shared by every store on them, so the instances an application runs in one process
 * decide on the very same offset. The last store to give its clock back stops the measuring.
 * Thread-safe.
 */
final class SharedClocks {

  private record Key(InetSocketAddress server, InstantSource local, int align) {}

  private static final class Entry {
    final MemcachedClock clock;
    int users;

    Entry(MemcachedClock clock) {
      this.clock = clock;
    }
  }

  private static final Map<Key, Entry> SHARED = new HashMap<>();

  private SharedClocks() {}

  /**
   * The clock of {@code servers}' first server as measured against {@code local}: the one this JVM
   * measures already, or a new one started on {@code scheduler}. Waits up to {@code waitMillis} for
   * its first measurement, so that a store decides on memcached's clock from its first request; a
   * memcached that does not answer by then leaves the offset at 0 until it does. Give it back with
   * {@link #release}.
   */
  static MemcachedClock acquire(
      List<InetSocketAddress> servers,
      InstantSource local,
      int timeoutMillis,
      int alignSeconds,
      ScheduledExecutorService scheduler,
      long waitMillis) {
    MemcachedClock c;
    synchronized (SHARED) {
      MemcachedClock fresh = new MemcachedClock(servers, local, timeoutMillis, alignSeconds);
      Key k = new Key(fresh.server(), local, alignSeconds);
      Entry e = SHARED.get(k);
      if (e == null) {
        e = new Entry(fresh);
        SHARED.put(k, e);
        fresh.start(scheduler);
      }
      e.users++;
      c = e.clock;
    }
    c.awaitFirst(waitMillis);
    return c;
  }

  /** Gives back what {@link #acquire} gave; the last user stops the measuring. */
  static void release(MemcachedClock clock) {
    synchronized (SHARED) {
      Entry e = null;
      for (Map.Entry<Key, Entry> m : SHARED.entrySet()) {
        if (m.getValue().clock == clock) {
          e = m.getValue();
          if (--e.users > 0) {
            return;
          }
          SHARED.remove(m.getKey());
          break;
        }
      }
      if (e == null) {
        return;
      }
    }
    clock.stop();
  }
}
