package dev.sluice.spi;

/**
 * A counter's name, {@code (rule, identity, periodMillis)}, as a map key for stores that keep
 * counters in memory. A lookup sets a per-thread probe and allocates nothing; a key that is stored
 * is a {@link #copy} and never changes afterwards. Not thread-safe.
 */
public final class CounterKey {

  private String rule;
  private String identity;
  private long periodMillis;
  private int hash;

  /** Names {@code (rule, identity, periodMillis)}; returns this key. */
  public CounterKey set(String rule, String identity, long periodMillis) {
    this.rule = rule;
    this.identity = identity;
    this.periodMillis = periodMillis;
    this.hash = (31 * rule.hashCode() + identity.hashCode()) * 31 + Long.hashCode(periodMillis);
    return this;
  }

  /** A new key naming the same counter, to store. */
  public CounterKey copy() {
    return new CounterKey().set(rule, identity, periodMillis);
  }

  public String rule() {
    return rule;
  }

  public String identity() {
    return identity;
  }

  public long periodMillis() {
    return periodMillis;
  }

  @Override
  public int hashCode() {
    return hash;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof CounterKey k
        && k.hash == hash
        && k.periodMillis == periodMillis
        && k.rule.equals(rule)
        && k.identity.equals(identity);
  }
}
