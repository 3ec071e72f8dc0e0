package dev.sluice.spi;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Where counters live. A store knows counting, not algorithms: windowed counters (it adds to the
 * current window of each counter and reports the count of the window before it), their expiry, and
 * two neutral atomic primitives on a running counter: raise to a floor, then add if within a
 * ceiling ({@link CounterBatch#floor}, {@link CounterBatch#ceiling}); and windows that may be given
 * back after they end ({@link CounterBatch#released}). Core composes its algorithms (sliding and
 * fixed windows, token buckets, concurrency limits) from these, once for every store. Shared values
 * ({@link #sharedValues}) and a clock ({@link #clock}) are optional capabilities.
 *
 * <p>One call carries every counter a decision needs, so a networked store can answer it in one
 * round trip. A store keeps a window at least until the window after next has begun (so the
 * previous window of any current window is still there) and may forget it afterwards.
 *
 * <p>Implementations are thread-safe. A store that cannot answer throws (or completes the future
 * exceptionally); the limiter turns that into a failed-open or failed-closed decision. A failure
 * after which any change of the call may still be applied carries a {@link StoreTimeoutException}
 * in its cause chain; any other failure means no change was applied (the store refused before
 * sending: a breaker open, a node down, not connected), and the limiter then gives back nothing.
 */
public interface CounterStore extends AutoCloseable {

  /**
   * Adds each update's delta to its window and returns, for update {@code i}, the new count of that
   * window ({@link Counts#current}) and the count of the window before it, {@code window - 1}
   * ({@link Counts#previous}). A window the store never saw, or has forgotten, counts 0. A running
   * counter ({@link CounterUpdate#floor} &gt; 0) is raised to its floor before the delta is added,
   * and written only if the result is at most its {@link CounterUpdate#ceiling} (the value is
   * reported either way: {@link CounterBatch#ceiling}); it reports 0 as its previous count.
   *
   * @param updates the counters one decision needs, each with its delta
   * @return one pair of counts per update, by the update's index: its window's new count, and the
   *     previous window's count
   */
  Counts increment(List<CounterUpdate> updates);

  /**
   * {@link #increment} for a batch: reports each counter's counts through {@link
   * CounterBatch#counted}. The default goes through {@link #increment(List)}; a store on the hot
   * path of a single instance overrides it to allocate nothing.
   *
   * @param batch the counters one decision needs, and where their counts go
   * @throws IllegalStateException if the store answered with fewer counts than counters
   */
  default void increment(CounterBatch batch) {
    int n = batch.size();
    Counts counts = increment(batch.updates());
    if (counts == null || counts.size() < n) {
      throw new IllegalStateException(
          "store returned "
              + (counts == null ? "null" : counts.size() + " counts")
              + " for "
              + n
              + " counters");
    }
    for (int i = 0; i < n; i++) {
      batch.counted(i, counts.current(i), counts.previous(i));
    }
  }

  /**
   * Asynchronous {@link #increment}; the default runs it in the calling thread.
   *
   * @param updates the counters one decision needs, each with its delta
   * @return the counts {@link #increment(List)} returns, or the store's failure
   */
  default CompletableFuture<Counts> incrementAsync(List<CounterUpdate> updates) {
    try {
      return CompletableFuture.completedFuture(increment(updates));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * Asynchronous {@link #increment(CounterBatch)}, for a caller that must not wait on the store (a
   * reactive adapter's event loop): reports each counter's counts through {@link
   * CounterBatch#counted} before the returned future completes. The batch stays the caller's until
   * then and is not reused meanwhile. The default runs {@link #increment(CounterBatch)} in the
   * calling thread and returns a completed future: right for a store that answers from memory. A
   * networked store overrides it to send the operations and return at once.
   *
   * @param batch the counters one decision needs, and where their counts go
   * @return completed once every counter is counted, or with the store's failure
   */
  default CompletableFuture<Void> incrementAsync(CounterBatch batch) {
    try {
      increment(batch);
      return CompletableFuture.completedFuture(null);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * Subtracts each update's delta from its window, or from a running counter's value (a refund). A
   * count never drops below 0, and a counter the store has forgotten stays forgotten. May return
   * before the change is visible.
   *
   * @param updates the counters to give back to, each with the delta to subtract
   */
  void decrement(List<CounterUpdate> updates);

  /**
   * Asynchronous {@link #decrement}; the default runs it in the calling thread.
   *
   * @param updates the counters to give back to, each with the delta to subtract
   * @return completed once the store took the change, or with the store's failure
   */
  default CompletableFuture<Void> decrementAsync(List<CounterUpdate> updates) {
    try {
      decrement(updates);
      return CompletableFuture.completedFuture(null);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * The store's shared values, or empty (the default) for a store that keeps none: an optional
   * capability, with its own contract test ({@code SharedValuesContract} in core's test-jar). The
   * bundled stores keep them: in memory for one process, in memcached or Redis for a fleet.
   *
   * @return the store's shared values, if it keeps any
   */
  default java.util.Optional<SharedValues> sharedValues() {
    return java.util.Optional.empty();
  }

  /**
   * How many counters the store dropped to make room before they expired, per node (a node's name,
   * such as {@code host:port}, to its evictions since this store was built); every node the store
   * knows is listed, from 0. An evicted counter starts again from zero: its client may be admitted
   * up to its limit again in that window. Empty (the default) for a store that cannot tell. Cheap
   * to call: a networked store answers from what it last read, never with a round trip.
   */
  default java.util.Map<String, Long> evictions() {
    return java.util.Map.of();
  }

  /**
   * The store's clock, for a fleet to agree on one time ({@link StoreClock}), or empty for a store
   * that offers none (one that serves a single instance needs none).
   */
  default java.util.Optional<StoreClock> clock() {
    return java.util.Optional.empty();
  }

  /** Releases connections and threads; the default does nothing. */
  @Override
  default void close() {}
}
