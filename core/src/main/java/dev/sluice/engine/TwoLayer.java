package dev.sluice.engine;

import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterUpdate;
import java.time.InstantSource;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;

/**
 * Two-layer counting ({@link dev.sluice.Sync}): a local layer in front of the shared store, which
 * the engine hands every call with a synced policy. It lives in the {@code sluice-twolayer} module,
 * found as a service; an engine without it refuses a synced policy when the policy is built. Public
 * only for that module; not part of the API.
 */
public interface TwoLayer {

  /**
   * Counts the batch: synced counters locally, the others in the shared store.
   *
   * @throws RuntimeException when the shared store fails for a direct counter, or when it is down
   *     and a synced counter is past its local allowance
   */
  void increment(TwoLayerBatch batch);

  /** {@link #increment} without waiting on the shared store. */
  CompletableFuture<Void> incrementAsync(TwoLayerBatch batch);

  /**
   * Takes back refunded permits from local counters; returns the updates that are not local, for
   * the shared store.
   */
  List<CounterUpdate> refundLocally(List<CounterUpdate> updates);

  /** Pushes every counter that is due, now: what the background task does on each tick. */
  void syncDue();

  /**
   * Pushes every counter's unsynced count at once and waits up to {@code timeoutMillis} for the
   * answer: for an instance that shuts down.
   *
   * @return whether every push was answered in time
   */
  boolean flush(long timeoutMillis);

  /** Makes the local layer of one engine. */
  interface Provider {

    /**
     * The local layer over {@code shared}.
     *
     * @param shared the store every instance shares
     * @param clock the engine's clock
     * @param scheduler where to sync in the background; empty when tests call {@link #syncDue()}
     * @return a layer that counts until its engine is collected
     */
    TwoLayer over(
        CounterStore shared, InstantSource clock, Optional<ScheduledExecutorService> scheduler);
  }
}
