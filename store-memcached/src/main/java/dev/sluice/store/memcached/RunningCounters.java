package dev.sluice.store.memcached;

import dev.sluice.spi.CounterUpdate;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The value each running counter (a token bucket's theoretical arrival time) had when this instance
 * last wrote it, by key; cleared whole when full. A counter this instance saw ahead of its floor,
 * or behind it by less than {@link #slack}, is moved by {@code incr} (one round trip); any other
 * (an idle bucket) by {@code gets} and compare-and-set, so an increment never lands on a value left
 * far behind. Thread-safe.
 */
final class RunningCounters {

  /**
   * A running counter's value as this instance last saw it, and when this instance last renewed its
   * expiry (clock millis).
   */
  private record Running(long value, long renewed) {}

  /** Sends a reserved request's {@code incr}: the amount to add, and the value reserved for it. */
  interface Send {
    void send(long amount, long reserved);
  }

  private final int capacity;
  private final ConcurrentHashMap<String, Running> values = new ConcurrentHashMap<>();

  RunningCounters(int capacity) {
    this.capacity = capacity;
  }

  /**
   * Reserves a request on running counter {@code key} when this instance saw it lately (no further
   * behind its floor than {@link #slack}): {@code send} is told the amount and the value reserved,
   * and nothing happens to a counter not seen lately. The request is reserved against this
   * instance's view {@code L} of the counter, under the view's lock, and {@code send} queues the
   * {@code incr} of the amount under it too, so this instance's increments reach memcached in the
   * order they were reserved: the request is given {@code max(L, floor) + delta} and the {@code
   * incr} adds exactly what moves {@code L} there (the delta, and the catch-up of a full bucket).
   * Alone, memcached's value is then the view, and every decision is exact GCRA. Other instances'
   * increments are not in the view: a catch-up may then count up to the slack twice (refusing, at
   * most, the slack's tokens wrongly), and a decision also sees what they added before it.
   */
  void reserve(String key, CounterUpdate u, Send send) {
    values.computeIfPresent(
        key,
        (k, r) -> {
          if (r.value() <= u.floor() - slack(u)) {
            return r; // not seen lately: compare-and-set
          }
          long desired = Math.max(r.value(), u.floor()) + u.delta();
          send.send(desired - r.value(), desired);
          return new Running(desired, r.renewed());
        });
  }

  /**
   * How far behind its floor this instance's view of a running counter may be and still be moved by
   * {@code incr} ({@link #reserve}): one request's delta, or a hundredth of the counter's period (a
   * token bucket's fill time, in the nanoseconds it counts), whichever is more. Alone, the view is
   * exact whatever the lag; with other instances writing, a catch-up may count their part of that
   * lag again, so the slack bounds what a fleet may refuse wrongly: one request's tokens, or 1 % of
   * the burst. A client sending faster than a hundredth of a fill time costs one round trip, not
   * two.
   */
  static long slack(CounterUpdate u) {
    return Math.max(u.delta(), u.periodMillis() * 10_000);
  }

  /**
   * Remembers {@code value} of running counter {@code key} when it is within one fill time (the
   * counter's period, in the nanoseconds it counts) of the floor: a request that passed. A value
   * past it holds increments of refused requests, whose refunds will lower it; it proves nothing.
   * {@code renewed}: the write renewed the key's expiry at {@code now}.
   */
  void remember(String key, long value, CounterUpdate u, boolean renewed, long now) {
    if (value - u.floor() > u.periodMillis() * 1_000_000) {
      return;
    }
    if (values.size() >= capacity) {
      values.clear();
    }
    values.merge(
        key,
        new Running(value, now),
        (was, seen) ->
            new Running(Math.max(was.value(), seen.value()), renewed ? now : was.renewed()));
  }

  /**
   * Whether this instance should renew running counter {@code key}'s expiry with this write at
   * {@code now}: it has not for a whole period (a fill time). {@code incr} sets an expiry only on
   * create; a key renewed at least once a fill time by each instance writing it outlives its TAT
   * (at most one fill time past the last write) by the expiry's two fill times plus slack.
   */
  boolean renewDue(String key, CounterUpdate u, long now) {
    Running known = values.get(key);
    return known == null || now - known.renewed() >= u.periodMillis();
  }

  /** Lowers this instance's view of {@code key} by a refund of {@code delta}. */
  void refund(String key, long delta) {
    values.computeIfPresent(key, (k, r) -> new Running(r.value() - delta, r.renewed()));
  }
}
