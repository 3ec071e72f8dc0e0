package dev.sluice.engine;

import dev.sluice.OnStoreFailure;
import dev.sluice.spi.CounterStore;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the {@link Evaluator} keeps for limiting in this instance's memory while the store fails
 * ({@link OnStoreFailure#LOCAL}): the local counters, what the store last said of each counter and
 * what local decisions owe it ({@link LastCounts}), and when local limiting began, logged once per
 * change. Thread-safe.
 */
final class LocalFallback {

  private static final Logger LOG = LoggerFactory.getLogger(Evaluator.class);

  private final CounterStore store;
  private final InstantSource clock;
  private final LocalCounters locals;
  private final LastCounts lastCounts = new LastCounts(LastCounts.MAX_COUNTERS);
  private final LogGate localLogs = new LogGate(Evaluator.WARN_INTERVAL_MILLIS);

  /** When local limiting began (clock millis), or 0 while the store answers. */
  private final AtomicLong localSince = new AtomicLong();

  /** Whether the start of the current local limiting was logged (its end is, then). */
  private volatile boolean localLogged;

  LocalFallback(CounterStore store, InstantSource clock) {
    this.store = store;
    this.clock = clock;
    this.locals = new LocalCounters(clock, LocalCounters.MAX_COUNTERS);
  }

  /** The counters of policies limited locally while the store fails. */
  LocalCounters locals() {
    return locals;
  }

  /** What the store last said and what is owed to it, for tests. */
  LastCounts lastCounts() {
    return lastCounts;
  }

  /** Logs the start of local limiting: once per change, at most every 10 s. */
  void started(long now, RuntimeException e) {
    if (localSince.get() == 0 && localSince.compareAndSet(0, now) && localLogs.tryAcquire(now)) {
      localLogged = true;
      LOG.warn(
          "counter store failing ({}): rules with onStoreFailure: local now limit in this"
              + " instance's memory at their share (limit ÷ instances) until it answers",
          e.toString());
    }
  }

  /** Logs the end of local limiting when its start was logged. */
  private void ended(long now) {
    long since = localSince.get();
    if (since != 0 && localSince.compareAndSet(since, 0) && localLogged) {
      localLogged = false;
      LOG.info(
          "counter store answers again after {} ms: rules with onStoreFailure: local count in it"
              + " again (what was admitted locally is added to it with the next decisions)",
          now - since);
    }
  }

  /**
   * The store answered at {@code now}: ends local limiting if it was on, and pushes what it
   * admitted.
   */
  void storeAnswered(long now) {
    if (localSince.get() != 0) {
      ended(now);
      pushOwedAsync(now);
    }
  }

  /** A counter of the store's call, as the local call's counter at the same index stands for it. */
  static final class FleetCounter {
    final dev.sluice.spi.CounterKey key;
    final long window;
    final long delta;
    final boolean running;
    final boolean released;
    final int instances;
    final dev.sluice.algorithm.TierLimit limit;

    FleetCounter(Call call, int i) {
      Counter c = call.counter(i);
      this.key = c.key.copy();
      this.window = c.window;
      this.delta = call.delta(i);
      this.running = call.floor(i) > 0;
      this.released = c.limit.heldUntilReleased();
      this.instances = c.entry.policy.instances();
      this.limit = c.limit;
    }
  }

  /** Starts each local counter from the store's last answer for its fleet counter, at its share. */
  void seed(Call call, List<FleetCounter> fleet) {
    for (int i = 0; i < call.size(); i++) {
      FleetCounter f = fleet.get(i);
      if (f.released) {
        continue;
      }
      LastCounts.Seed s = lastCounts.seed(f.key, call.window(i), f.running, f.instances);
      if (s != null) {
        locals.seed(call.key(i), s, f.running);
      }
    }
  }

  /** Owes the store what an allowed local decision counted, but a refunded shadow policy's. */
  void owe(Call call, List<FleetCounter> fleet, long now) {
    for (int i = 0; i < call.size(); i++) {
      FleetCounter f = fleet.get(i);
      Counter c = call.counter(i);
      if (!f.released && !c.entry.shadowFailed) {
        lastCounts.owe(
            f.key, f.window, f.limit, f.instances, f.delta, f.running ? c.current : 0, now);
      }
    }
  }

  /**
   * Pushes what was admitted locally for counters no decision carried yet, in one asynchronous
   * call, now that the store answers: a client that does not come back to this instance must not
   * leave its local admissions out of the store's count. A failed push is owed again.
   */
  private void pushOwedAsync(long now) {
    LastCounts.Debts debts = lastCounts.owed(now);
    if (debts == null) {
      return;
    }
    try {
      java.util.concurrent.CompletableFuture<long[]> unused =
          store
              .incrementAsync(debts.updates())
              .whenComplete(
                  (v, e) -> {
                    if (e != null) {
                      debts.failed();
                      LOG.debug("push of local admissions failed", e);
                    }
                  });
    } catch (RuntimeException e) {
      debts.failed();
      LOG.debug("push of local admissions failed", e);
    }
  }

  /**
   * Pushes what the local decisions counted and the store has not had, waiting up to {@code
   * timeoutMillis}: for an instance that shuts down. A push that fails is owed again.
   */
  void pushOwed(long timeoutMillis) throws InterruptedException {
    LastCounts.Debts debts = lastCounts.owed(clock.millis());
    if (debts == null) {
      return;
    }
    try {
      store.incrementAsync(debts.updates()).get(timeoutMillis, TimeUnit.MILLISECONDS);
    } catch (ExecutionException | TimeoutException | RuntimeException e) {
      debts.failed();
      LOG.debug("push of local admissions at close failed", e);
    }
  }
}
