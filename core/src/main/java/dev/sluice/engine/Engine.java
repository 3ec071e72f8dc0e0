package dev.sluice.engine;

import dev.sluice.Algorithm;
import dev.sluice.DecisionListener;
import dev.sluice.LimiterBuilder;
import dev.sluice.Outcome;
import dev.sluice.RateLimiter;
import dev.sluice.Slots;
import dev.sluice.StoreStatus;
import dev.sluice.Tier;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterUpdate;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What {@link RateLimiter} (limits keys) and {@code dev.sluice.http.RequestLimiter} (limits HTTP
 * requests) call: a decision adds the policies that apply to an {@link Outcome}, each with the
 * identity it counts, then {@link #decide}s them together through the {@link Evaluator}, and
 * afterwards hands out the slots a request holds. Thread-safe; each decision's working state lives
 * in the caller's outcome.
 *
 * <p>Public only as a bridge to {@code dev.sluice.http} and {@code dev.sluice.control}; not for
 * applications.
 */
public final class Engine {

  private static final Logger LOG = LoggerFactory.getLogger(Engine.class);
  private static final long SHADOW_LOG_INTERVAL_MILLIS = 10_000;

  private final Map<String, LogGate> shadowLogs = new ConcurrentHashMap<>();
  private final Evaluator evaluator;
  private final int denyCacheSize;
  private final DecisionListener listener;
  private final FleetSize fleet;

  /** The largest deny cache a policy may have. */
  public static final int MAX_DENY_CACHE_SIZE = DenyCache.MAX_CAPACITY;

  /**
   * An engine on {@code store}: the clock is read as it is when {@code clockGiven}, else corrected
   * by the store's clock where it has one; two-layer counters sync on {@code scheduler} when {@code
   * backgroundSync}, else by hand (tests).
   */
  public Engine(
      CounterStore store,
      InstantSource clock,
      boolean clockGiven,
      boolean backgroundSync,
      ScheduledExecutorService scheduler,
      int denyCacheSize,
      DecisionListener listener) {
    InstantSource time =
        clockGiven
            ? clock
            : store
                .clock()
                .<InstantSource>map(c -> new FleetClock(clock, c, listener))
                .orElse(clock);
    this.evaluator =
        new Evaluator(store, time, backgroundSync ? Optional.of(scheduler) : Optional.empty());
    this.denyCacheSize = denyCacheSize;
    this.listener = listener;
    this.fleet = new FleetSize(store, time, scheduler);
  }

  /** {@return the clock the engine reads} */
  public InstantSource clock() {
    return evaluator.clock();
  }

  /** The local layer of two-layer policies. */
  TwoLayer twoLayer() {
    return evaluator.twoLayer();
  }

  /** An engine of the given settings. */
  public static Engine of(LimiterBuilder<?> settings) {
    return Api.engine(settings);
  }

  /**
   * A policy this engine counts, with a deny cache of the engine's size (none for a shadow policy).
   *
   * @throws IllegalArgumentException if the tiers are empty or share a period, do not suit the
   *     algorithm ({@link Algorithm#TOKEN_BUCKET} has one, only it has a burst), or staggering is
   *     asked of an algorithm that cannot
   */
  public Policy policy(
      String id,
      Algorithm algorithm,
      List<Tier> tiers,
      boolean failClosed,
      boolean shadow,
      boolean staggered) {
    Tier.checkTiers(tiers);
    algorithm.checkTiers(tiers);
    algorithm.checkStagger(staggered);
    return new Policy(id, algorithm, tiers, failClosed, shadow, staggered, denyCacheSize, fleet);
  }

  /** A rate limiter of {@code policy}, which this engine counts. */
  public RateLimiter limiter(Policy policy) {
    return new SingleRateLimiter(this, policy);
  }

  /**
   * A counter of the fleet-usage load shedder: at most {@code capacity} requests in flight across
   * the fleet, counted in the store like a concurrency rule ({@code slotTtl}), refused with a 503,
   * never deny-cached, failing open.
   */
  public Policy shedder(String id, long capacity, Duration slotTtl) {
    return policy(
            id, Algorithm.CONCURRENCY, List.of(new Tier(capacity, slotTtl)), false, false, false)
        .asShedding();
  }

  /** {@return the listener every decision is told to} */
  public DecisionListener listener() {
    return listener;
  }

  /** Sets the request's priority class for load shedding on its outcome. */
  public void classify(Outcome outcome, String priorityClass) {
    Answer out = Api.answer(outcome);
    out.priorityClass = priorityClass;
  }

  /**
   * Counts the request in {@code out} in flight for a worker shedder until its {@link #slots} are
   * released, when {@code exit} runs.
   */
  public void enter(Outcome outcome, Runnable exit) {
    Answer out = Api.answer(outcome);
    out.inFlight = exit;
  }

  /**
   * Refuses the request in {@code out} by worker shedder {@code shedder} (a 503): no quota to
   * report, {@code capacity} naming the shedder's capacity; its priority class stays.
   */
  public void shedByWorkers(Outcome outcome, String shedder, Tier capacity, long retryAfterMillis) {
    Answer out = Api.answer(outcome);
    Verdicts.shedByWorkers(out, shedder, capacity, retryAfterMillis);
  }

  /** Starts a decision in {@code out}: no policy applies yet. */
  public void begin(Outcome outcome) {
    Api.answer(outcome).clear();
  }

  /**
   * Adds a policy that applies, counted against {@code identity} (one longer than 256 characters
   * under its digest).
   */
  public void add(Outcome outcome, Policy policy, String identity) {
    Answer out = Api.answer(outcome);
    out.call.add(policy, identity);
  }

  /**
   * Decides for the policies added since {@link #begin} and writes the answer into {@code out}:
   * nothing applied when none was added. Tells the listener.
   *
   * @return whether the request may proceed
   */
  public boolean decide(Outcome outcome, long permits) {
    Answer out = Api.answer(outcome);
    Call call = out.call;
    if (call.entries() == 0) {
      Verdicts.none(out);
      return true;
    }
    if (listener == DecisionListener.NONE) {
      evaluator.decide(out, permits);
    } else {
      long t0 = System.nanoTime();
      evaluator.decide(out, permits);
      tell(out, out.fromDenyCache() ? -1 : System.nanoTime() - t0);
    }
    if (out.shadowRejected()) {
      logShadow(call);
    }
    return out.allowed();
  }

  /**
   * {@link #decide} without waiting on the store: completes, never exceptionally, once {@code out}
   * holds the answer, in the calling thread when no store call was needed or the store answered at
   * once (in memory), else in the thread the store answered on. Tells the listener. The caller
   * leaves {@code out} alone until then, so it is the request's own, not a reused one.
   *
   * @return whether the request may proceed
   */
  public CompletableFuture<Boolean> decideAsync(Outcome outcome, long permits) {
    Answer out = Api.answer(outcome);
    Call call = out.call;
    if (call.entries() == 0) {
      Verdicts.none(out);
      return CompletableFuture.completedFuture(Boolean.TRUE);
    }
    long t0 = listener == DecisionListener.NONE ? 0 : System.nanoTime();
    return evaluator
        .decideAsync(out, permits)
        .thenApply(
            v -> {
              if (listener != DecisionListener.NONE) {
                tell(out, out.fromDenyCache() ? -1 : System.nanoTime() - t0);
              }
              if (out.shadowRejected()) {
                logShadow(call);
              }
              return out.allowed();
            });
  }

  /**
   * Decides as on a store failure because the caller failed ({@code e}: a key source or quota
   * resolver that threw, a bug): by the policies added so far, or, when none was, nothing applies.
   * Logged with its stack trace at most every 10 s, and told to the listener. Never throws.
   */
  public void failed(Outcome outcome, RuntimeException e) {
    Answer out = Api.answer(outcome);
    Call call = out.call;
    if (call.entries() == 0) {
      evaluator.logFailure(e);
      Verdicts.none(out);
    } else {
      evaluator.failed(call, out, e);
    }
    try {
      listener.onError(e);
    } catch (RuntimeException ignored) {
      // A listener must not throw; if it does, the decision stands.
    }
    if (call.entries() > 0) {
      tell(out, -1);
    }
  }

  /**
   * Logs {@code e} and tells the listener, for a failure that left the decision to the other
   * policies: a rule whose key or quota could not be resolved, while other rules or the load
   * shedders apply.
   */
  public void reportFailure(RuntimeException e) {
    evaluator.logFailure(e);
    try {
      listener.onError(e);
    } catch (RuntimeException ignored) {
      // A listener must not throw; if it does, the decision stands.
    }
  }

  /**
   * The concurrency slots the decision in {@code out} took ({@link Algorithm#CONCURRENCY}), to
   * {@link Slots#release} when the request completes: none unless the request was allowed and the
   * store counted it. Call it before {@code out} is reused.
   */
  public Slots slots(Outcome outcome) {
    Answer out = Api.answer(outcome);
    if (out.slots == null) {
      Slots held = heldSlots(out);
      Runnable exit = out.inFlight;
      out.inFlight = null;
      Slots slots = exit == null ? held : Api.with(held, exit);
      out.slots = slots.holds() ? tracked(slots) : slots;
    }
    return out.slots;
  }

  /** Slots handed out and not released yet: what {@link #close} gives back. */
  private final Set<Slots> outstanding = ConcurrentHashMap.newKeySet();

  /** {@code slots}, known to {@link #close} until released. */
  private Slots tracked(Slots slots) {
    Slots[] self = new Slots[1];
    self[0] = Api.with(slots, () -> outstanding.remove(self[0]));
    outstanding.add(self[0]);
    return self[0];
  }

  /** How long {@link #close} waits for the store to take each push. */
  static final long CLOSE_TIMEOUT_MILLIS = 2_000;

  /**
   * For an instance that shuts down, before its store is closed: gives back every concurrency slot
   * its requests still hold (a request that completes later releases nothing twice), pushes what
   * its two-layer counters and its local decisions counted and the store has not had yet, and waits
   * up to 2 s for each. Decisions made afterwards are still counted, as before. Never throws.
   */
  public void close() {
    for (Slots s : List.copyOf(outstanding)) {
      s.release();
    }
    evaluator.close(CLOSE_TIMEOUT_MILLIS);
    fleet.close();
  }

  /**
   * The store's slots: those of the allowed request's concurrency counters, but not a shadow
   * policy's that was refunded at once. A decision the store failed holds its slots too when its
   * increments were sent: memcached may apply one after the client gave up waiting, and the release
   * takes it back. A decision made locally holds its local slots, and the store's too when its
   * increment timed out.
   */
  private Slots heldSlots(Answer out) {
    Call call = out.call;
    boolean local = out.storeStatus() == StoreStatus.LOCAL;
    if (!out.allowed() || (out.storeFailed() && !local && !call.sent)) {
      return Slots.NONE;
    }
    List<CounterUpdate> held = null;
    for (int i = 0; i < call.size(); i++) {
      Counter c = call.counter(i);
      if (c.limit.heldUntilReleased() && !c.entry.shadowFailed) {
        if (held == null) {
          held = new ArrayList<>(2);
        }
        held.add(
            new CounterUpdate(
                c.entry.policy.id,
                c.entry.identity,
                c.limit.periodMillis(),
                c.window,
                call.permits,
                0,
                true));
      }
    }
    if (held == null) {
      return Slots.NONE;
    }
    List<CounterUpdate> slots = List.copyOf(held);
    if (!local) {
      return Api.slots(evaluator.store(), slots);
    }
    Slots inMemory = Api.slots(evaluator.locals(), slots);
    return call.sent ? Api.with(inMemory, Api.slots(evaluator.store(), slots)::release) : inMemory;
  }

  /** Logs each shadow policy that would have rejected, at most every 10 s per policy. */
  private void logShadow(Call call) {
    long now = evaluator.clock().millis();
    for (int i = 0; i < call.size(); i++) {
      Counter c = call.counter(i);
      Policy p = c.entry.policy;
      if (p.shadow
          && !c.count.passed()
          && shadowLogs
              .computeIfAbsent(p.id, id -> new LogGate(SHADOW_LOG_INTERVAL_MILLIS))
              .tryAcquire(now)) {
        LOG.info(
            "shadow rule '{}' would have rejected a request (limit {}); logged at most every {} s",
            p.id,
            c.tier(),
            SHADOW_LOG_INTERVAL_MILLIS / 1000);
      }
    }
  }

  private void tell(Answer out, long storeNanos) {
    if (listener == DecisionListener.NONE) {
      return;
    }
    Call call = out.call;
    String[] ids = new String[call.entries()];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = call.entry(i).policy.id;
    }
    try {
      listener.onDecision(List.of(ids), Api.decision(out.copy()), storeNanos);
    } catch (RuntimeException e) {
      // A listener must not throw; if it does, the decision stands.
    }
  }
}
