package dev.sluice.engine;

import dev.sluice.algorithm.TierLimit;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterUpdate;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;

/**
 * The engine's working state for one decision: which policies apply, with which identity, and one
 * counter per (policy, tier). Reused by the {@link Answer} that owns it, so a decision allocates
 * nothing once it has been used; one thread at a time.
 */
final class Call implements TwoLayerBatch {

  private Entry[] entries = new Entry[0];
  private Counter[] counters = new Counter[0];
  private int entryCount;
  private int counterCount;
  long permits;

  /** The decision's instant, for running counters' floors. */
  long now;

  /** Whether any added policy is counted in two layers. */
  boolean synced;

  /** Whether any added policy limits locally on a store failure ({@link Policy#local}). */
  boolean local;

  /** Whether the counters were handed to the store: a failed call may still have counted them. */
  boolean sent;

  /**
   * The most permits a request may ask for before some non-shadow policy could never let it pass:
   * the least {@link Policy#maxPermits} of those added.
   */
  long maxPermits;

  /**
   * What the last {@link #layOut} laid out: while the same policies and identities are added again,
   * the counters it named stand, and need not be named again.
   */
  private int laidEntries = -1;

  private int laidCounters;

  /** Whether an entry's policy or identity changed since the last {@link #layOut}. */
  private boolean changed;

  void clear() {
    entryCount = 0;
    counterCount = 0;
    synced = false;
    local = false;
    sent = false;
    maxPermits = Long.MAX_VALUE;
  }

  /**
   * The longest identity counted as it is; a longer one is counted under its digest ({@link
   * #bounded}), so a client sending long keys cannot make the counters, the deny caches or the
   * local layers hold kilobytes each.
   */
  static final int MAX_IDENTITY = 256;

  /**
   * Adds a policy, whose counters {@link #layOut} names: a request a deny cache answers never needs
   * them. An outcome reused for the same policies and identities finds its fields already set, and
   * leaves them: a reference store costs a garbage collector's write barrier.
   */
  @SuppressWarnings("ReferenceEquality") // the same object, not an equal one
  void add(Policy policy, String id) {
    if (entryCount == entries.length) {
      entries = grow(entries);
    }
    Entry e = entries[entryCount];
    if (e == null) {
      e = entries[entryCount] = new Entry();
    }
    entryCount++;
    String identity = id;
    if (id.length() > MAX_IDENTITY) {
      // The same long identity as the last time keeps its digest, and its deny-cache entry.
      identity = id == e.given ? e.identity : bounded(id);
    }
    if (e.given != id) {
      e.given = id;
    }
    if (e.policy != policy) {
      e.policy = policy;
      e.denial = null;
      changed = true;
    }
    if (e.identity != identity) {
      e.identity = identity;
      e.denial = null;
      changed = true;
    }
    if (e.shadowFailed) {
      e.shadowFailed = false;
    }
    synced |= policy.syncMillis > 0;
    local |= policy.local != null;
    if (!policy.shadow) {
      maxPermits = Math.min(maxPermits, policy.maxPermits);
    }
  }

  /**
   * Names one counter per tier of each policy added, in order; nothing to do when the same policies
   * and identities were added as for the last decision.
   */
  @SuppressWarnings("ReferenceEquality") // the same object, not an equal one
  void layOut() {
    if (!changed && entryCount == laidEntries) {
      counterCount = laidCounters;
      return;
    }
    counterCount = 0;
    for (int i = 0; i < entryCount; i++) {
      Entry e = entries[i];
      Policy policy = e.policy;
      e.firstCounter = counterCount;
      for (int t = 0; t < policy.tiers.length; t++) {
        if (counterCount == counters.length) {
          counters = grow(counters);
        }
        Counter c = counters[counterCount];
        if (c == null) {
          c = counters[counterCount] = new Counter();
        }
        counterCount++;
        if (c.entry != e) {
          c.entry = e;
        }
        c.tier = t;
        TierLimit limit = policy.limits[t];
        if (c.limit != limit) {
          c.limit = limit;
          c.windowEnd = Long.MIN_VALUE;
        }
        if (c.key == null) {
          c.key = new CounterKey();
        }
        c.key.set(policy.id, e.identity, limit.periodMillis());
      }
    }
    laidEntries = entryCount;
    laidCounters = counterCount;
    changed = false;
  }

  int entries() {
    return entryCount;
  }

  /**
   * The fleet shedders among the policies added (no client's quota, left out of the IETF fields).
   */
  List<String> shedders() {
    List<String> ids = List.of();
    for (int e = 0; e < entryCount; e++) {
      Policy p = entries[e].policy;
      if (p.shedding) {
        if (ids.isEmpty()) {
          ids = new ArrayList<>(2);
        }
        ids.add(p.id);
      }
    }
    return ids;
  }

  /**
   * A copy of the policies added and, with {@code counters}, of the counters' figures, for an
   * outcome copied from this call's: what its quotas and IETF fields are read from. It holds no
   * slots.
   */
  Call copy(boolean withCounters) {
    Call c = new Call();
    c.entries = new Entry[entryCount];
    for (int i = 0; i < entryCount; i++) {
      Entry e = new Entry();
      c.entries[i] = e;
      e.policy = entries[i].policy;
      e.identity = entries[i].identity;
      e.firstCounter = entries[i].firstCounter;
      e.shadowFailed = entries[i].shadowFailed;
    }
    c.entryCount = entryCount;
    int n = withCounters ? counterCount : 0;
    c.counters = new Counter[n];
    for (int i = 0; i < n; i++) {
      Counter from = counters[i];
      Counter to = new Counter();
      c.counters[i] = to;
      to.entry = c.entries[indexOf(from.entry)];
      to.tier = from.tier;
      to.limit = from.limit;
      to.window = from.window;
      to.windowStart = from.windowStart;
      to.windowEnd = from.windowEnd;
      to.windowOffset = from.windowOffset;
      to.current = from.current;
      to.previous = from.previous;
      to.count.copy(from.count);
    }
    c.counterCount = n;
    c.permits = permits;
    c.now = now;
    return c;
  }

  @SuppressWarnings("ReferenceEquality") // the same object
  private int indexOf(Entry e) {
    for (int i = 0; i < entryCount; i++) {
      if (entries[i] == e) {
        return i;
      }
    }
    throw new IllegalStateException("a counter of no entry");
  }

  /**
   * An identity longer than {@link #MAX_IDENTITY} as {@code #} and the URL-safe Base64 of the
   * SHA-256 of its UTF-16 code units (any string, lone surrogates included, stays apart): 44
   * characters.
   */
  static String bounded(String identity) {
    try {
      byte[] d =
          MessageDigest.getInstance("SHA-256").digest(identity.getBytes(StandardCharsets.UTF_16LE));
      return '#' + Base64.getUrlEncoder().withoutPadding().encodeToString(d);
    } catch (NoSuchAlgorithmException e) {
      throw new AssertionError("SHA-256 is required of every JVM", e);
    }
  }

  Entry entry(int i) {
    return entries[i];
  }

  Counter counter(int i) {
    return counters[i];
  }

  private static <T> T[] grow(T[] a) {
    return Arrays.copyOf(a, Math.max(4, 2 * a.length));
  }

  @Override
  public int size() {
    return counterCount;
  }

  @Override
  public String policy(int i) {
    return counters[i].entry.policy.id;
  }

  @Override
  public String identity(int i) {
    return counters[i].entry.identity;
  }

  @Override
  public long periodMillis(int i) {
    return counters[i].limit.periodMillis();
  }

  @Override
  public CounterKey key(int i) {
    return counters[i].key;
  }

  @Override
  public long window(int i) {
    return counters[i].window;
  }

  @Override
  public long delta(int i) {
    return counters[i].limit.delta(permits);
  }

  @Override
  public long floor(int i) {
    return counters[i].limit.floor(now);
  }

  @Override
  public long ceiling(int i) {
    return counters[i].limit.ceiling(now);
  }

  @Override
  public boolean released(int i) {
    return counters[i].limit.heldUntilReleased();
  }

  @Override
  public long syncMillis(int i) {
    return counters[i].entry.policy.syncMillis;
  }

  @Override
  public long localAllowance(int i) {
    Counter c = counters[i];
    return Math.max(1, c.limit.limit() / c.entry.policy.instances());
  }

  @Override
  public void counted(int i, long current, long previous) {
    Counter c = counters[i];
    c.current = current;
    c.previous = previous;
  }

  /**
   * Runs each tier's algorithm on the counts its counter holds ({@link Counter#counted}) and marks
   * the shadow policies that fail; sets {@link #shadowRejected}.
   *
   * @return whether every non-shadow tier passed
   */
  boolean judge() {
    boolean allowed = true;
    shadowRejected = false;
    for (int i = 0; i < counterCount; i++) {
      Counter c = counters[i];
      c.count.observe(now, c.windowStart, c.current, c.previous, permits);
      c.limit.evaluate(c.count);
      if (!c.count.passed()) {
        if (c.entry.policy.shadow) {
          shadowRejected = true;
          c.entry.shadowFailed = true;
        } else {
          allowed = false;
        }
      }
    }
    return allowed;
  }

  /** Whether a shadow policy failed in the last {@link #judge}. */
  boolean shadowRejected;

  /**
   * Reckons each tier that passed again without this request's permits: what its counter holds once
   * the request is refunded. For all tiers after a refusal, or only the failing shadow policies'
   * (what an allowed request gives back). A failing tier reckons without them already.
   */
  void withdraw(boolean shadowFailedOnly) {
    for (int i = 0; i < counterCount; i++) {
      Counter c = counters[i];
      if (c.count.passed() && (!shadowFailedOnly || c.entry.shadowFailed)) {
        c.count.observe(
            now,
            c.windowStart,
            Math.max(0, c.current - c.limit.delta(permits)),
            c.previous,
            permits);
        c.limit.evaluate(c.count);
      }
    }
  }

  /**
   * The counters as updates to refund: all of them, or the failing shadow policies'; never a
   * counter that refused and that the store did not write ({@link TierLimit#refusedUnwritten}).
   */
  List<CounterUpdate> updates(boolean shadowFailedOnly) {
    List<CounterUpdate> out = new ArrayList<>(size());
    for (int i = 0; i < size(); i++) {
      Counter c = counter(i);
      if (!c.count.passed() && c.limit.refusedUnwritten()) {
        continue;
      }
      if (!shadowFailedOnly || c.entry.shadowFailed) {
        out.add(update(i));
      }
    }
    return out;
  }
}
