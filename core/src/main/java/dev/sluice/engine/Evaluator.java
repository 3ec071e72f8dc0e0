package dev.sluice.engine;

import dev.sluice.OnStoreFailure;
import dev.sluice.StoreStatus;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterUpdate;
import dev.sluice.spi.Counts;
import dev.sluice.spi.StoreTimeoutException;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One decision, for the {@link Engine}: deny cache, one batched store call for every (policy, tier)
 * counter, each tier's algorithm, refunds. It knows no algorithm: each tier's {@link
 * dev.sluice.algorithm.TierLimit} reads the counts. Thread-safe and stateless apart from the
 * policies' deny caches; a decision's working state lives in the caller's {@link Answer}.
 */
final class Evaluator {

  private static final Logger LOG = LoggerFactory.getLogger(Evaluator.class);

  static final long FAIL_CLOSED_RETRY_MILLIS = 1_000;
  static final long WARN_INTERVAL_MILLIS = 10_000;

  private final CounterStore store;

  /** The local layer of synced policies; null without the two-layer module. */
  private final TwoLayer twoLayer;

  private final InstantSource clock;
  private final LogGate warnings = new LogGate(WARN_INTERVAL_MILLIS);
  private final LogGate errors = new LogGate(WARN_INTERVAL_MILLIS);
  private final LocalFallback fallback;

  CounterStore store() {
    return store;
  }

  Evaluator(
      CounterStore store, InstantSource clock, Optional<ScheduledExecutorService> syncScheduler) {
    this.store = store;
    this.clock = clock;
    this.twoLayer = TwoLayerModule.over(store, clock, syncScheduler);
    this.fallback = new LocalFallback(store, clock);
  }

  /** The counters of policies limited locally while the store fails. */
  CounterStore locals() {
    return fallback.locals();
  }

  /** The local layer of two-layer policies. */
  TwoLayer twoLayer() {
    return twoLayer;
  }

  InstantSource clock() {
    return clock;
  }

  /**
   * Decides for the policies added to {@code out}'s call ({@link Call#add}), at least one, each
   * counted against its identity, and writes the answer into {@code out}.
   */
  void decide(Answer out, long permits) {
    if (permits <= 0) {
      throw new IllegalArgumentException("permits must be > 0");
    }
    Call call = out.call;
    long now = clock.millis();
    if (answeredWithoutCounting(call, permits, now, out)) {
      return;
    }
    call.sent = true;
    TwoLayerBatch batch = fallback.lastCounts().withPushes(call);
    try {
      if (call.synced) {
        twoLayer.increment(batch);
      } else {
        store.increment(batch);
      }
    } catch (RuntimeException e) {
      failed(out, permits, now, batch, e);
      return;
    }
    counted(out, now);
  }

  /**
   * {@link #decide} without waiting on the store: the deny caches and the local layer answer at
   * once, the store's counts through {@link
   * CounterStore#incrementAsync(dev.sluice.spi.CounterBatch)}, and the same algorithms, refunds and
   * failure settings decide from them. The returned future completes, never exceptionally, once
   * {@code out} holds the answer; {@code out} is not touched by anyone else until then.
   */
  CompletableFuture<Void> decideAsync(Answer out, long permits) {
    if (permits <= 0) {
      throw new IllegalArgumentException("permits must be > 0");
    }
    Call call = out.call;
    long now = clock.millis();
    if (answeredWithoutCounting(call, permits, now, out)) {
      return CompletableFuture.completedFuture(null);
    }
    call.sent = true;
    TwoLayerBatch batch = fallback.lastCounts().withPushes(call);
    CompletableFuture<Void> counted;
    try {
      counted = call.synced ? twoLayer.incrementAsync(batch) : store.incrementAsync(batch);
    } catch (RuntimeException e) {
      counted = CompletableFuture.failedFuture(e);
    }
    if (counted.isDone() && !counted.isCompletedExceptionally()) {
      // Answered at once (in memory): decided in the calling thread, with nothing allocated.
      counted(out, now);
      return counted;
    }
    return counted.handle(
        (v, e) -> {
          if (e == null) {
            counted(out, now);
          } else {
            failed(out, permits, now, batch, unwrap(e));
          }
          return null;
        });
  }

  /**
   * Decides from the counts the store answered, the same after {@link #decide} and {@link
   * #decideAsync}: remembers them for a local limit, ends a period of local limiting, and applies
   * the algorithms.
   */
  private void counted(Answer out, long now) {
    Call call = out.call;
    if (call.local) {
      fallback.lastCounts().answered(call, now);
    }
    fallback.storeAnswered(now);
    evaluate(call, out, now, store);
    if (call.local && out.allowed()) {
      fallback.lastCounts().admitted(call);
    }
  }

  /** Decides on the store's failure {@code e}: what it was pushed is owed again. */
  private void failed(Answer out, long permits, long now, TwoLayerBatch batch, RuntimeException e) {
    CompletionStage<Counts> late =
        out.call.synced ? null : StoreTimeoutException.lateCounts(e).orElse(null);
    Pushes pushes = batch instanceof Pushes p ? p : null;
    if (pushes != null && late == null) {
      pushes.failed();
    }
    // The call is laid out again for a local decision, and reused by the next: the late answer
    // is read against a copy of what was sent.
    Call sent = late == null ? null : out.call.copy(true);
    int sentSize = batch.size();
    if (!decideLocally(out, permits, now, e)) {
      // Sent only if it may still apply: a store that refused before sending wrote nothing.
      out.call.sent = StoreTimeoutException.in(e);
      storeFailed(out.call, out, e);
    }
    if (late != null) {
      boolean allowed = out.allowed();
      boolean local = out.storeStatus() == StoreStatus.LOCAL;
      CompletionStage<Counts> unused =
          late.whenComplete(
              (counts, error) -> {
                boolean whole = error == null && counts != null && counts.size() >= sentSize;
                if (pushes != null) {
                  // Owed again only when the late answer does not show them written.
                  if (whole) {
                    pushes.answeredLate(counts);
                  } else {
                    pushes.failed();
                  }
                }
                if (whole) {
                  try {
                    answeredLate(sent, counts, allowed, local);
                  } catch (RuntimeException x) {
                    LOG.debug("late store answer not taken", x);
                  }
                }
              });
    }
  }

  /**
   * Takes the counts of a call whose store answered after its decision was made without them: a
   * counter they show over its limit is remembered exactly as a refusal the store answered in time
   * (the deny cache refuses its next requests without a store call), and what the store counted for
   * a request that was not admitted by it is given back. A refused request gives back every counter
   * the store wrote; one admitted locally gives back its local policies' counters, which it owes
   * the store already; one that failed open keeps its count. Concurrency slots were given back, or
   * are released, already.
   */
  private void answeredLate(Call sent, Counts counts, boolean allowed, boolean local) {
    for (int i = 0; i < sent.size(); i++) {
      sent.counted(i, counts.current(i), counts.previous(i));
    }
    boolean passed = sent.judge();
    List<CounterUpdate> back = new ArrayList<>(0);
    for (int i = 0; i < sent.size(); i++) {
      Counter c = sent.counter(i);
      if (c.limit.heldUntilReleased() || (!c.count.passed() && c.limit.refusedUnwritten())) {
        continue;
      }
      if (!allowed || (local && c.entry.policy.local != null) || c.entry.shadowFailed) {
        back.add(sent.update(i));
      }
    }
    if (!back.isEmpty()) {
      refund(sent, back, store);
    }
    if (!allowed) {
      sent.withdraw(false);
    }
    if (passed) {
      Denials.refresh(sent, sent.now);
    } else {
      Denials.remember(sent, sent.now);
    }
  }

  private static RuntimeException unwrap(Throwable e) {
    Throwable t = e;
    while ((t instanceof CompletionException || t instanceof ExecutionException)
        && t.getCause() != null) {
      t = t.getCause();
    }
    return t instanceof RuntimeException r ? r : new IllegalStateException(t);
  }

  /**
   * Answers from the deny caches, or a request too large to ever pass, with nothing counted; else
   * readies the call's counters for {@code permits} at {@code now} and returns false.
   */
  private static boolean answeredWithoutCounting(Call call, long permits, long now, Answer out) {
    if (permits > call.maxPermits && Denials.oversized(call, permits, out)) {
      return true;
    }
    boolean denied = Denials.anyDenied(call, now);
    call.permits = permits;
    call.now = now;
    locate(call, now);
    return denied && Denials.answer(call, now, out);
  }

  /** Names the call's counters and finds each one's window at {@code now}. */
  private static void locate(Call call, long now) {
    call.layOut();
    for (int i = 0; i < call.size(); i++) {
      Counter c = call.counter(i);
      c.locate(now, c.limit.offset(c.entry.identity));
    }
  }

  /**
   * Decides from the counts {@code counted} answered: each tier's algorithm, refunds to it on a
   * rejection (and the figures reckoned as they stand once refunded), the deny caches and what they
   * recall.
   */
  private void evaluate(Call call, Answer out, long now, CounterStore counted) {
    boolean allowed = call.judge();
    boolean shadowRejected = call.shadowRejected;
    if (allowed) {
      if (shadowRejected) {
        // A shadow policy gives back what its enforcement would have given back; the others keep
        // theirs.
        refund(call, call.updates(true), counted);
        call.withdraw(true);
      }
      Denials.refresh(call, now);
      Verdicts.counted(out, now, true, Verdicts.leastRemaining(call), 0, shadowRejected, false);
      return;
    }
    refund(call, call.updates(false), counted);
    call.withdraw(false);
    Denials.remember(call, now);
    Verdicts.refused(out, now, call, false);
  }

  /**
   * Decides in this instance's memory when the store failed and the policies ask for it ({@link
   * OnStoreFailure#LOCAL}): the call is laid out again with each such policy at its share, the
   * others (failing open) left out. A policy that rejects on failure decides first, as before.
   *
   * @return false when no policy of the call limits locally, or the local counters failed too
   */
  private boolean decideLocally(Answer out, long permits, long now, RuntimeException e) {
    Call call = out.call;
    Policy binding = failureBinding(call);
    if (binding.failClosed && !binding.shadow) {
      return false;
    }
    int n = call.entries();
    Policy[] local = new Policy[n];
    String[] identities = new String[n];
    int k = 0;
    List<LocalFallback.FleetCounter> fleet = new ArrayList<>(call.size());
    for (int i = 0; i < n; i++) {
      Entry entry = call.entry(i);
      if (entry.policy.local != null) {
        local[k] = entry.policy.localShare();
        identities[k++] = entry.identity;
        for (int j = 0; j < entry.policy.tiers.length; j++) {
          fleet.add(new LocalFallback.FleetCounter(call, entry.firstCounter + j));
        }
      }
    }
    if (k == 0) {
      return false;
    }
    fallback.started(now, e);
    boolean unconfirmed = StoreTimeoutException.in(e);
    if (unconfirmed) {
      // The slots of the policies left out (the fleet's shedder, a concurrency rule that allows)
      // may still be counted late, and no release will come: given back now, behind the increment
      // on the same connection.
      List<CounterUpdate> dropped = new ArrayList<>(0);
      for (int i = 0; i < call.size(); i++) {
        Counter c = call.counter(i);
        if (c.entry.policy.local == null && c.limit.heldUntilReleased()) {
          dropped.add(call.update(i));
        }
      }
      if (!dropped.isEmpty()) {
        refund(call, dropped, store);
      }
    }
    call.clear();
    for (int i = 0; i < k; i++) {
      call.add(local[i], identities[i]);
    }
    call.sent = unconfirmed;
    if (answeredWithoutCounting(call, permits, now, out)) {
      Verdicts.decidedLocally(out);
      return true;
    }
    try {
      fallback.seed(call, fleet);
      fallback.locals().increment(call);
    } catch (RuntimeException full) {
      LOG.debug("local counters failed", full);
      return false;
    }
    evaluate(call, out, now, fallback.locals());
    if (out.allowed()) {
      fallback.owe(call, fleet, now);
    }
    Verdicts.decidedLocally(out);
    if (!out.allowed() && unconfirmed) {
      refundSlots(call);
    }
    return true;
  }

  /**
   * Pushes what the two-layer counters and the local decisions counted and the store has not had,
   * waiting up to {@code timeoutMillis} for each push: for an instance that shuts down. A push that
   * fails is owed again (and lost with the instance).
   */
  void close(long timeoutMillis) {
    try {
      if (twoLayer != null) {
        twoLayer.flush(timeoutMillis);
      }
      fallback.pushOwed(timeoutMillis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** What the store last said and what is owed to it, for tests. */
  LastCounts lastCounts() {
    return fallback.lastCounts();
  }

  private void refund(Call call, List<CounterUpdate> updates, CounterStore counted) {
    List<CounterUpdate> batch = call.synced ? twoLayer.refundLocally(updates) : updates;
    if (batch.isEmpty()) {
      return;
    }
    try {
      CompletableFuture<Void> unused =
          counted
              .decrementAsync(batch)
              .whenComplete(
                  (v, e) -> {
                    if (e != null) {
                      LOG.debug("refund failed", e);
                    }
                  });
    } catch (RuntimeException e) {
      LOG.debug("refund failed", e);
    }
  }

  private void storeFailed(Call call, Answer out, RuntimeException e) {
    if (warnings.tryAcquire(clock.millis())) {
      LOG.warn(
          "counter store failed; deciding without it (warned at most every {} s): {}",
          WARN_INTERVAL_MILLIS / 1000,
          e.toString());
    } else {
      LOG.debug("counter store failed", e);
    }
    Verdicts.withoutCounts(out, failureBinding(call));
    if (!out.allowed() && call.sent) {
      refundSlots(call);
    }
  }

  /**
   * Gives the store back the slots of a request refused on its failure, when its increments were
   * sent: the store may count them late, and no release will.
   */
  private void refundSlots(Call call) {
    List<CounterUpdate> slots = new ArrayList<>(0);
    for (CounterUpdate u : call.updates(false)) {
      if (u.released()) {
        slots.add(u);
      }
    }
    if (!slots.isEmpty()) {
      refund(call, slots, store);
    }
  }

  /**
   * The decision when the limiter itself failed (a key source or quota resolver that threw, a bug)
   * after the call's policies were known: the same as a store failure, so it is never an error
   * response. Logged with its stack trace at most every {@value #WARN_INTERVAL_MILLIS} ms.
   */
  void failed(Call call, Answer out, RuntimeException e) {
    logFailure(e);
    Verdicts.withoutCounts(out, failureBinding(call));
  }

  /** Logs a limiter failure that left nothing to decide on. */
  void logFailure(RuntimeException e) {
    if (errors.tryAcquire(clock.millis())) {
      LOG.error(
          "rate limiter failed; decided without the rule it failed in, or as on a store failure"
              + " (logged at most every {} s)",
          WARN_INTERVAL_MILLIS / 1000,
          e);
    } else {
      LOG.debug("rate limiter failed", e);
    }
  }

  /** The policy whose failure setting decides: a fail-closed, non-shadow one first. */
  private static Policy failureBinding(Call call) {
    Policy binding = null;
    for (int e = 0; e < call.entries(); e++) {
      Policy p = call.entry(e).policy;
      if (!p.shadow && (binding == null || (p.failClosed && !binding.failClosed))) {
        binding = p;
      }
    }
    return binding == null ? call.entry(0).policy : binding;
  }
}
