package dev.sluice.store.inmemory;

import dev.sluice.spi.CounterKey;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.InstantSource;

/**
 * The counters of one store, in a hash table whose slots hold the counters themselves (open
 * addressing, linear probing): a lookup reads one slot and then the counter it names, with no node
 * between them. On many keys that lookup is the decision's one miss in memory that no prefetcher
 * can foresee; a map of nodes would add a second, dependent one.
 *
 * <p>The table is split into segments by hash, each with its own lock and at most its share of the
 * bound. A lookup takes no lock: it may miss a counter that a writer is moving, never find a wrong
 * one, and a miss is settled under the segment's lock before a counter is created. Writers
 * (creating, expiring, evicting, growing) hold the segment's lock. A segment keeps at least half
 * its slots empty, so probes are short and always end.
 *
 * <p>Removing a counter moves the ones after it back into the gap (no tombstones), so a table that
 * has seen many counters come and go probes as quickly as a new one. A segment that is full when a
 * counter arrives evicts, among the next {@value #SAMPLE} counters it holds, the one with the
 * smallest count in its two newest windows (a stale one counts 0). A client that is counted often
 * thus outlives a flood of new identities, each counted once; at worst a client's count is
 * forgotten.
 *
 * <p>A counter of concurrency slots with a request in flight ({@link Counter#holdsSlots}) is never
 * evicted: forgetting it would let its client take its whole limit again while those requests run.
 * When none of the sample can go, the segment looks further, and when every counter it holds has a
 * request in flight the new counter is stored over the bound. So the table exceeds its bound only
 * by counters that have requests in flight, at most one per request the application is serving.
 * Where a new counter cannot be stored at all (its {@value #MAXIMUM_PROBE} slots of probe all
 * holding slots in use, which only identities made to share a hash reach), its decision is counted
 * in a counter of its own that is not kept: that identity's count is forgotten, nobody else's.
 */
final class CounterTable {

  /**
   * The furthest a counter lives from its hash's slot, and so the longest lookup. With half the
   * slots empty, keys of unrelated hashes almost never reach it (a few in a million new counters
   * when a segment is half full); keys made to share a hash reach it at once, and then replace one
   * another instead of making every lookup in their neighbourhood slow.
   */
  static final int MAXIMUM_PROBE = 64;

  /** How many counters a full segment looks at to pick the one to evict. */
  private static final int SAMPLE = 8;

  /**
   * How many slots each new counter's arrival checks for expired counters (about half as many
   * counters), and the most it drops.
   */
  private static final int SWEEP_PER_INSERT = 16;

  /** A segment holds at least this many counters before the bound is split further. */
  private static final int MINIMUM_SEGMENT = 1_024;

  private static final int INITIAL_SLOTS = 16;

  private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(Counter[].class);

  private final Segment[] segments;
  private final int segmentBits;
  private final InstantSource clock;

  /**
   * Room for {@code maximumCounters} counters, split into up to {@code concurrency} segments, on
   * {@code clock}, which dates counters for expiry and eviction.
   */
  CounterTable(long maximumCounters, int concurrency, InstantSource clock) {
    int n = 1;
    while (n < concurrency && n < 64 && 2L * n * MINIMUM_SEGMENT <= maximumCounters) {
      n *= 2;
    }
    this.clock = clock;
    this.segments = new Segment[n];
    this.segmentBits = Integer.numberOfTrailingZeros(n);
    for (int i = 0; i < n; i++) {
      // The remainder goes to the first segments: the shares add up to the bound exactly.
      long share = maximumCounters / n + (i < maximumCounters % n ? 1 : 0);
      segments[i] = new Segment(Math.toIntExact(share), segmentBits);
    }
  }

  /** Murmur3's finalizer: every bit of the key's hash moves both the segment and the slot. */
  private static int mix(int h) {
    h ^= h >>> 16;
    h *= 0x85ebca6b;
    h ^= h >>> 13;
    h *= 0xc2b2ae35;
    return h ^ (h >>> 16);
  }

  private Segment segment(int mixed) {
    return segments[mixed & (segments.length - 1)];
  }

  /**
   * The counter named by {@code key}, created for {@code owner} if there is none. Without a lock
   * when the counter is there.
   */
  Counter getOrCreate(CounterKey key, InMemoryCounterStore owner) {
    return lookUp(key, owner, false);
  }

  /**
   * {@link #getOrCreate}, creating a counter of concurrency slots if {@code slots}: one that is
   * never evicted while a request holds one of its slots.
   */
  Counter getOrCreate(CounterKey key, InMemoryCounterStore owner, boolean slots) {
    return lookUp(key, owner, slots);
  }

  /** The counter named by {@code key}, or null; looked for again under the lock on a miss. */
  Counter get(CounterKey key) {
    return lookUp(key, null, false);
  }

  /**
   * Finds {@code key}'s counter without a lock, or else under its segment's lock, where a missing
   * one is created for {@code creator} unless that is null.
   */
  private Counter lookUp(CounterKey key, InMemoryCounterStore creator, boolean slots) {
    int mixed = mix(key.hashCode());
    Segment s = segment(mixed);
    int home = mixed >>> segmentBits;
    Counter c = find(s.slots, key, home);
    if (c != null && !c.removed) {
      return c;
    }
    synchronized (s) {
      c = find(s.slots, key, home);
      if (c == null && creator != null) {
        long now = clock.millis();
        s.sweep(now, SWEEP_PER_INSERT, SWEEP_PER_INSERT);
        while (s.size >= s.capacity && s.evict(home, now)) {
          // Over the bound once counters with requests in flight let go: back within it at once.
        }
        c = new Counter(creator, key, slots, false);
        if (!s.insert(c, home, now)) {
          c = new Counter(creator, key, slots, true);
        }
      }
      return c;
    }
  }

  /** Drops every expired counter and returns how many are left. */
  long sweepAll() {
    long now = clock.millis();
    long live = 0;
    for (Segment s : segments) {
      synchronized (s) {
        s.sweep(now, s.slots.length, Long.MAX_VALUE);
        live += s.size;
      }
    }
    return live;
  }

  /** How many counters were evicted to make room for new ones since the table was made. */
  long evictions() {
    long n = 0;
    for (Segment s : segments) {
      synchronized (s) {
        n += s.evictions;
      }
    }
    return n;
  }

  /** How many counters are stored, expired ones included. */
  long size() {
    long n = 0;
    for (Segment s : segments) {
      synchronized (s) {
        n += s.size;
      }
    }
    return n;
  }

  /** The counter named by {@code key} in {@code t}, probing from slot {@code home}, or null. */
  private static Counter find(Counter[] t, CounterKey key, int home) {
    int mask = t.length - 1;
    for (int n = 0, i = home & mask; n < MAXIMUM_PROBE; n++, i = (i + 1) & mask) {
      Counter c = (Counter) SLOT.getAcquire(t, i);
      if (c == null) {
        return null;
      }
      if (key.equals(c)) {
        return c;
      }
    }
    return null;
  }

  /** One lock's share of the table; every method runs under the segment's lock. */
  private static final class Segment {

    /** Written under the lock, read without it: a new array is published whole. */
    volatile Counter[] slots;

    final int capacity;
    private final int segmentBits;
    int size;

    /** Counters evicted to make room, since the segment was made. */
    long evictions;

    /** Where the next expiry sweep starts. */
    private int hand;

    Segment(int capacity, int segmentBits) {
      this.capacity = capacity;
      this.segmentBits = segmentBits;
      // At most the least power of two with room for twice the capacity (half the slots stay
      // empty), unless counters holding slots lift the size over the capacity.
      int maximumSlots = Integer.highestOneBit(Math.max(1, 2 * capacity - 1)) << 1;
      this.slots = new Counter[Math.min(INITIAL_SLOTS, maximumSlots)];
    }

    private int home(Counter c, int mask) {
      return (mix(c.hashCode()) >>> segmentBits) & mask;
    }

    /**
     * Puts a new counter in the first empty slot within {@value #MAXIMUM_PROBE} of its home, or
     * else in place of the least counted of the {@value #SAMPLE} counters from its home on (of the
     * whole probe when those all hold slots in use): every slot before that one is taken, so a
     * lookup still reaches it, and no other counter moves. Returns false, storing nothing, when
     * every counter of the probe holds slots in use.
     */
    boolean insert(Counter c, int home, long now) {
      if (2 * (size + 1) > slots.length) {
        grow();
      }
      Counter[] t = slots;
      int mask = t.length - 1;
      if (place(t, c, home & mask)) {
        size++;
        return true;
      }
      int victim = leastCounted(t, home & mask, SAMPLE, now);
      if (victim < 0) {
        victim = leastCounted(t, home & mask, MAXIMUM_PROBE, now);
      }
      if (victim < 0) {
        return false;
      }
      evictions++;
      SLOT.setRelease(t, victim, c);
      return true;
    }

    /** Puts {@code c} in the first empty slot of the {@value #MAXIMUM_PROBE} from {@code i}. */
    private static boolean place(Counter[] t, Counter c, int i) {
      int mask = t.length - 1;
      for (int n = 0; n < MAXIMUM_PROBE; n++, i = (i + 1) & mask) {
        if (t[i] == null) {
          SLOT.setRelease(t, i, c);
          return true;
        }
      }
      return false;
    }

    private void grow() {
      Counter[] old = slots;
      Counter[] t = new Counter[2 * old.length];
      int mask = t.length - 1;
      for (Counter c : old) {
        if (c != null && !place(t, c, home(c, mask))) {
          // Only keys made to share a hash crowd a table that is at most half full.
          c.removed = true;
          size--;
        }
      }
      slots = t;
    }

    /**
     * Removes the counter in slot {@code i} and moves each later one of its run that may take the
     * gap back into it, so that every probe still reaches its counter (a lookup racing the move may
     * miss one, and looks again under the lock).
     */
    void removeAt(int i) {
      Counter[] t = slots;
      int mask = t.length - 1;
      t[i].removed = true;
      int gap = i;
      for (int j = (i + 1) & mask; t[j] != null; j = (j + 1) & mask) {
        // The counter at j may move back to the gap unless its home lies after the gap.
        if (((j - home(t[j], mask)) & mask) >= ((j - gap) & mask)) {
          SLOT.setRelease(t, gap, t[j]);
          gap = j;
        }
      }
      SLOT.setRelease(t, gap, null);
      size--;
    }

    /**
     * Checks {@code slotBudget} slots from where the last sweep stopped, dropping at most {@code
     * dropBudget} expired counters.
     */
    void sweep(long now, int slotBudget, long dropBudget) {
      int mask = slots.length - 1;
      int i = hand & mask;
      for (int looked = 0, dropped = 0; looked < slotBudget && dropped < dropBudget && size > 0; ) {
        Counter c = slots[i];
        if (c != null && c.expired(now) && c.retire(now)) {
          // The slot may now hold a counter moved back into it: look at it again.
          removeAt(i);
          dropped++;
        } else {
          i = (i + 1) & mask;
          looked++;
        }
      }
      hand = i;
    }

    /**
     * Drops the least counted of the {@value #SAMPLE} counters from slot {@code home} on, leaving
     * those that hold slots in use; when all of them do, the first counter after them that holds
     * none. Drops nothing when every counter holds slots in use, and then returns false.
     */
    boolean evict(int home, long now) {
      Counter[] t = slots;
      int victim = leastCounted(t, home, SAMPLE, now);
      if (victim < 0) {
        victim = leastCounted(t, home, size, 1, now);
      }
      if (victim < 0) {
        return false;
      }
      evictions++;
      removeAt(victim);
      return true;
    }

    /**
     * The slot of the least counted of the {@code sample} counters from slot {@code home} on,
     * marked removed ({@link Counter#retire}), among those that hold no slots in use; -1 if all do.
     */
    private int leastCounted(Counter[] t, int home, int sample, long now) {
      return leastCounted(t, home, sample, sample, now);
    }

    /**
     * The slot of the least counted of the first {@code enough} counters that hold no slots in use
     * among the {@code sample} counters from slot {@code home} on, marked removed; -1 if none.
     */
    private int leastCounted(Counter[] t, int home, int sample, int enough, long now) {
      int mask = t.length - 1;
      int victim = -1;
      long least = Long.MAX_VALUE;
      int candidates = 0;
      for (int i = home & mask, seen = 0, looked = 0;
          seen < sample && candidates < enough && looked < t.length;
          i = (i + 1) & mask, looked++) {
        Counter c = t[i];
        if (c != null) {
          seen++;
          if (c.holdsSlots(now)) {
            continue;
          }
          candidates++;
          long weight = c.weight(now);
          if (victim < 0 || weight < least) {
            least = weight;
            victim = i;
          }
        }
      }
      if (victim >= 0 && !t[victim].retire(now)) {
        // A slot was taken in the victim as it was chosen: it stays (and now holds slots).
        return leastCounted(t, home, sample, enough, now);
      }
      return victim;
    }
  }
}
