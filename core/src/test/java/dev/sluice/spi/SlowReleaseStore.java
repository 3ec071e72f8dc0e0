package dev.sluice.spi;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * An in-memory store whose decrements (a released slot, a refund) take {@code delayMillis} in the
 * releasing thread, as a store across a network takes its round trip: a slot given back after its
 * response was sent is then still held when the client's next request arrives. On WebFlux the
 * releasing thread is the event loop, so a server's loops must not be BlockHound's {@code
 * reactor-http-} ones.
 */
public final class SlowReleaseStore implements CounterStore {

  public final ReferenceCounterStore store = new ReferenceCounterStore();
  private final long delayNanos;

  public SlowReleaseStore(long delayMillis) {
    this.delayNanos = TimeUnit.MILLISECONDS.toNanos(delayMillis);
  }

  @Override
  public Counts increment(List<CounterUpdate> updates) {
    return store.increment(updates);
  }

  @Override
  public void decrement(List<CounterUpdate> updates) {
    // Not a wait for time to pass: the release's own latency, so the order of events shows.
    long end = System.nanoTime() + delayNanos;
    for (long left = delayNanos; left > 0; left = end - System.nanoTime()) {
      LockSupport.parkNanos(left);
    }
    store.decrement(updates);
  }
}
