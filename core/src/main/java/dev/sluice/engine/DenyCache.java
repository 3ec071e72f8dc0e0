package dev.sluice.engine;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Identities known to be over a limit, each until the instant it may pass again. A hash table whose
 * slots hold the denials themselves (open addressing, linear probing): a lookup reads one slot and
 * then the denial it names, with no map node between them, and takes no lock. Writers hold the
 * cache's lock; they are rare next to readers, one per rejection that reached the store.
 *
 * <p>Lossy by design, since a denial that is not cached costs a store call later and never a wrong
 * answer. A denial lives at most {@value #MAXIMUM_PROBE} slots from where its hash points, and a
 * lookup looks no further: identities chosen to share a hash cannot make a lookup slow, they only
 * stop being cached. Bounded: at most {@code capacity} denials, in a table at most half full. When
 * full, expired denials are swept (at most once per {@value #SWEEP_INTERVAL_MILLIS} ms of the
 * limiter's clock) and a new denial that still does not fit is not cached. Thread-safe.
 */
final class DenyCache {

  static final long SWEEP_INTERVAL_MILLIS = 100;

  /** The furthest a denial lives from its hash's slot, and so the longest lookup. */
  static final int MAXIMUM_PROBE = 16;

  private static final int INITIAL_SLOTS = 16;

  private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(Denial[].class);

  /** Why and until when an identity is denied. Never changes once cached. */
  static final class Denial {
    private final String identity;
    private final int hash;
    private final long untilMillis;
    private final int tier;
    private final long used;
    private final long resetAtMillis;

    Denial(String identity, long untilMillis, int tier, long used, long resetAtMillis) {
      this.identity = identity;
      this.hash = identity.hashCode();
      this.untilMillis = untilMillis;
      this.tier = tier;
      this.used = used;
      this.resetAtMillis = resetAtMillis;
    }

    long untilMillis() {
      return untilMillis;
    }

    int tier() {
      return tier;
    }

    long used() {
      return used;
    }

    long resetAtMillis() {
      return resetAtMillis;
    }

    @SuppressWarnings("ReferenceEquality") // the same string: no need to compare characters
    boolean names(String identity, int hash) {
      return this.identity == identity || (this.hash == hash && this.identity.equals(identity));
    }
  }

  private final int capacity;
  private final int maximumSlots;

  /** Written under the lock, read without it: a new array is published whole. */
  private volatile Denial[] slots;

  /** Denials in the table, expired ones included; under the lock. */
  private int size;

  /**
   * False once anything was cached: the allow path then reads one field instead of probing. Set
   * back when a sweep empties the table.
   */
  private volatile boolean empty = true;

  private boolean swept;
  private long lastSweep;

  /** The most denials a cache holds: its table of twice as many slots still fits an array. */
  static final int MAX_CAPACITY = 1 << 28;

  DenyCache(int capacity) {
    if (capacity < 1 || capacity > MAX_CAPACITY) {
      throw new IllegalArgumentException(
          "a deny cache holds 1 to " + MAX_CAPACITY + " denials: " + capacity);
    }
    this.capacity = capacity;
    // The least power of two with room for twice the capacity: half the slots stay empty.
    this.maximumSlots = Integer.highestOneBit(Math.max(1, 2 * capacity - 1)) << 1;
    this.slots = new Denial[Math.min(INITIAL_SLOTS, maximumSlots)];
  }

  /**
   * The slot a hash points at: its product with the golden ratio's fraction, top bits (Fibonacci
   * hashing), so that identities alike but for their last characters, whose hashes are neighbours,
   * land far apart and do not run into each other.
   */
  private static int home(int hash, int mask) {
    return (hash * 0x9E3779B9) >>> Integer.numberOfLeadingZeros(mask);
  }

  /** The denial in force for {@code identity} at {@code now}, or null. */
  Denial get(String identity, long now) {
    if (empty) {
      // The usual state while nobody is over a limit: no lookup on the allow path.
      return null;
    }
    Denial d = find(slots, identity, identity.hashCode());
    return d == null || d.untilMillis <= now ? null : d;
  }

  private static Denial find(Denial[] t, String identity, int hash) {
    int mask = t.length - 1;
    int i = home(hash, mask);
    for (int n = 0; n < MAXIMUM_PROBE; n++, i = (i + 1) & mask) {
      Denial d = (Denial) SLOT.getAcquire(t, i);
      if (d == null || d.names(identity, hash)) {
        return d;
      }
    }
    return null;
  }

  /**
   * Caches a denial, unless a later denial of its identity is cached already or there is no room.
   */
  void put(Denial denial, long now) {
    synchronized (this) {
      Denial[] t = slots;
      int mask = t.length - 1;
      int i = home(denial.hash, mask);
      int expired = -1;
      for (int n = 0; n < MAXIMUM_PROBE && t[i] != null; n++, i = (i + 1) & mask) {
        Denial d = t[i];
        if (d.names(denial.identity, denial.hash)) {
          if (d.untilMillis < denial.untilMillis) {
            SLOT.setRelease(t, i, denial);
          }
          return;
        }
        if (expired < 0 && d.untilMillis <= now) {
          expired = i;
        }
      }
      if (expired >= 0) {
        // An expired denial's slot is reused in place: the run of slots stays whole.
        SLOT.setRelease(t, expired, denial);
      } else if (size < capacity || (sweep(now) && size < capacity)) {
        insert(denial);
      } else {
        return;
      }
      empty = false;
    }
  }

  /** Adds a denial that is not in the table; under the lock. */
  private void insert(Denial denial) {
    if (2 * (size + 1) > slots.length && slots.length < maximumSlots) {
      rebuild(slots.length * 2, Long.MIN_VALUE);
    }
    if (place(slots, denial)) {
      size++;
    }
  }

  /** Puts a denial in the first empty slot near its hash's, if there is one. */
  private static boolean place(Denial[] t, Denial denial) {
    int mask = t.length - 1;
    int i = home(denial.hash, mask);
    for (int n = 0; n < MAXIMUM_PROBE; n++, i = (i + 1) & mask) {
      if (t[i] == null) {
        SLOT.setRelease(t, i, denial);
        return true;
      }
    }
    return false;
  }

  /**
   * Drops the expired denials, if no sweep ran in the last {@value #SWEEP_INTERVAL_MILLIS} ms;
   * returns whether one ran.
   */
  private boolean sweep(long now) {
    if (swept && now - lastSweep < SWEEP_INTERVAL_MILLIS) {
      return false;
    }
    swept = true;
    lastSweep = now;
    rebuild(slots.length, now);
    if (size == 0) {
      empty = true;
    }
    return true;
  }

  /**
   * Publishes a new table of {@code length} slots holding the denials that last beyond {@code now}.
   * Readers see the old table or the new one, both right.
   */
  private void rebuild(int length, long now) {
    Denial[] next = new Denial[length];
    int kept = 0;
    for (Denial d : slots) {
      if (d != null && d.untilMillis > now && place(next, d)) {
        kept++;
      }
    }
    slots = next;
    size = kept;
  }

  int capacity() {
    return capacity;
  }

  synchronized int size() {
    return size;
  }
}
