package dev.sluice;

import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterUpdate;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The concurrency slots one allowed request holds ({@link Algorithm#CONCURRENCY}), to give back
 * when it completes, however it completes: {@link #release} is one asynchronous store operation,
 * and a second call does nothing. A request never released (its instance died) has its slots back
 * within two of the rule's periods. Thread-safe.
 */
public final class Slots {

  /** No slot held. */
  public static final Slots NONE = new Slots(null, List.of());

  private final CounterStore store;
  private final List<CounterUpdate> held;
  private final Runnable local;
  private final AtomicBoolean released = new AtomicBoolean();

  Slots(CounterStore store, List<CounterUpdate> held) {
    this(store, held, null);
  }

  private Slots(CounterStore store, List<CounterUpdate> held, Runnable local) {
    this.store = store;
    this.held = held;
    this.local = local;
  }

  /** These slots, and {@code exit} run once when they are released (after what ran before). */
  Slots with(Runnable exit) {
    Runnable before = local;
    return new Slots(
        store,
        held,
        before == null
            ? exit
            : () -> {
              before.run();
              exit.run();
            });
  }

  /** {@return whether any slot is held} */
  public boolean holds() {
    return !held.isEmpty() || local != null;
  }

  /** Gives the slots back, once; never throws (a store failure leaves them to expire). */
  public void release() {
    if (!holds() || !released.compareAndSet(false, true)) {
      return;
    }
    if (local != null) {
      local.run();
    }
    if (held.isEmpty()) {
      return;
    }
    try {
      var unused = store.decrementAsync(held);
    } catch (RuntimeException e) {
      // The slots expire with their windows.
    }
  }

  @Override
  public String toString() {
    return held.isEmpty() ? "no slots" : "slots " + held + (released.get() ? " (released)" : "");
  }
}
