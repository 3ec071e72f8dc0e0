package dev.sluice.spi;

/**
 * A counter's name, {@code (policy, identity, periodMillis)}, as a map key for stores that keep
 * counters in memory. A lookup uses a key the batch reuses ({@link CounterBatch#key}) and allocates
 * nothing; a key that is stored is a {@link #copy} (or a subclass made from one) and never changes
 * afterwards. Equal to any key, of any subclass, of the same name. Not thread-safe.
 *
 * <p>Ordered by policy, identity and period, as equality is: a {@code ConcurrentHashMap} keeps keys
 * that share a hash in a tree it searches by that order, so identities chosen to collide ("Aa" and
 * "BB" hash alike) cost a lookup a few comparisons, not one per colliding key.
 */
public class CounterKey implements Comparable<CounterKey> {

  private String policy;
  private String identity;
  private long periodMillis;
  private int hash;

  /** The stored key a store last found for this name, or this key. */
  private CounterKey stored = this;

  /** A key naming nothing yet: {@link #set} it. */
  public CounterKey() {}

  /** A key naming what {@code name} names, for a subclass that is stored as its own key. */
  protected CounterKey(CounterKey name) {
    this.policy = name.policy;
    this.identity = name.identity;
    this.periodMillis = name.periodMillis;
    this.hash = name.hash;
  }

  /** Names {@code (policy, identity, periodMillis)}; returns this key. */
  @SuppressWarnings("ReferenceEquality") // the same strings: nothing to do
  public final CounterKey set(String policy, String identity, long periodMillis) {
    if (policy == this.policy && identity == this.identity && periodMillis == this.periodMillis) {
      // Named so already (the usual case of a reused key): no stores, no hashing.
      return this;
    }
    this.policy = policy;
    this.identity = identity;
    this.periodMillis = periodMillis;
    this.stored = this;
    this.hash = (31 * policy.hashCode() + identity.hashCode()) * 31 + Long.hashCode(periodMillis);
    return this;
  }

  /**
   * The stored key that a store {@link #remember}ed finding for this name, or this key itself when
   * none was remembered since the name last changed. A store that keeps its counters as their own
   * keys can then skip the lookup while one client keeps coming back; it must check that what it
   * gets is still its own and still stored.
   */
  public final CounterKey stored() {
    return stored;
  }

  /** Remembers the stored key a store found for this name, until the name changes. */
  public final void remember(CounterKey stored) {
    this.stored = stored;
  }

  /** {@return a new key naming the same counter, to store} */
  public final CounterKey copy() {
    return new CounterKey(this);
  }

  public final String policy() {
    return policy;
  }

  public final String identity() {
    return identity;
  }

  public final long periodMillis() {
    return periodMillis;
  }

  @Override
  public final int hashCode() {
    return hash;
  }

  @Override
  public final int compareTo(CounterKey o) {
    int c = policy.compareTo(o.policy);
    if (c == 0) {
      c = identity.compareTo(o.identity);
    }
    return c != 0 ? c : Long.compare(periodMillis, o.periodMillis);
  }

  @Override
  public final boolean equals(Object o) {
    return o instanceof CounterKey k
        && k.hash == hash
        && k.periodMillis == periodMillis
        && k.policy.equals(policy)
        && k.identity.equals(identity);
  }
}
