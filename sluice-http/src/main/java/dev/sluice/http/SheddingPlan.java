package dev.sluice.http;

import dev.sluice.Outcome;
import dev.sluice.engine.Engine;
import dev.sluice.engine.Policy;
import dev.sluice.shedding.LoadShedder;
import java.util.ArrayList;
import java.util.List;

/**
 * Load shedding compiled: the classes in match order with each one's shedding rank (0 for critical,
 * 1 for the class shed first), the fleet shedder's two counters (every request in flight, up to the
 * capacity; the non-critical ones, up to the capacity less the reserve), and this instance's worker
 * shedder. Kept across rule reloads while its settings stay the same.
 */
final class SheddingPlan {
  static final String FLEET_IDENTITY = "fleet";
  static final String UNMATCHED = "other";

  final Shedding settings;
  final PriorityClass[] classes;
  final int[] rankOf;
  final int ranks;
  final Policy fleetAll;
  final Policy fleetNonCritical;
  final LoadShedder shedder;

  SheddingPlan(Shedding s, Engine engine) {
    this.settings = s;
    this.classes = s.classes().toArray(new PriorityClass[0]);
    java.util.TreeSet<Integer> sheddable =
        new java.util.TreeSet<>(java.util.Comparator.reverseOrder());
    for (PriorityClass c : classes) {
      if (!c.critical()) {
        sheddable.add(c.priority());
      }
    }
    List<Integer> order = new ArrayList<>(sheddable);
    this.rankOf = new int[classes.length];
    for (int i = 0; i < classes.length; i++) {
      rankOf[i] = classes[i].critical() ? 0 : order.indexOf(classes[i].priority()) + 1;
    }
    this.ranks = Math.max(1, order.size());
    if (s.fleetCapacity() > 0) {
      this.fleetAll = engine.shedder("load-shedding", s.fleetCapacity(), s.slotTtl());
      this.fleetNonCritical =
          engine.shedder("load-shedding-non-critical", s.nonCriticalCapacity(), s.slotTtl());
    } else {
      this.fleetAll = null;
      this.fleetNonCritical = null;
    }
    LoadShedder.Builder b =
        LoadShedder.builder()
            .clock(engine.clock())
            .listener(engine.listener())
            .delay(s.delay())
            .ramp(s.ramp())
            .retryAfter(s.retryAfter());
    s.workers().ifPresent(b::workers);
    s.adaptive().ifPresent(b::adaptive);
    this.shedder = b.build();
  }

  /**
   * Decides a request of class {@code cls} whose policies, the fleet shedder's included, are added
   * to {@code out}: the fleet's counters first, then this instance's worker shedder, which counts
   * an admitted request in flight until its slots are released.
   */
  boolean decide(Engine engine, Outcome out, int cls) {
    add(engine, out, cls);
    return admitted(engine, out, cls, engine.decide(out, 1));
  }

  /** {@link #decide} without waiting on the store ({@link Engine#decideAsync}). */
  java.util.concurrent.CompletableFuture<Boolean> decideAsync(Engine engine, Outcome out, int cls) {
    add(engine, out, cls);
    return engine.decideAsync(out, 1).thenApply(allowed -> admitted(engine, out, cls, allowed));
  }

  /** Adds the fleet shedder's counters for a request of class {@code cls}. */
  private void add(Engine engine, Outcome out, int cls) {
    if (fleetAll != null) {
      engine.add(out, fleetAll, FLEET_IDENTITY);
      if (!critical(cls)) {
        engine.add(out, fleetNonCritical, FLEET_IDENTITY);
      }
    }
  }

  /** What the worker shedder makes of a request the store's counters {@code allowed} or not. */
  private boolean admitted(Engine engine, Outcome out, int cls, boolean allowed) {
    String name = name(cls);
    engine.classify(out, name);
    if (!allowed) {
      if (out.shed()) {
        shedder.refusedByFleet(name);
      }
      return false;
    }
    if (shedder.sheddingWorkers()) {
      // In flight from here: the worker deciding is busy with this request.
      engine.enter(out, shedder.enter());
    }
    if (shedder.sheds(rank(cls), ranks)) {
      // Refused after the store counted it: what it took goes back at once.
      engine.slots(out).release();
      engine.shedByWorkers(
          out, LoadShedder.WORKERS, shedder.capacityTier(), shedder.retryAfterMillis());
      shedder.refusedByWorkers(name);
      return false;
    }
    return true;
  }

  /** The index of the first class that matches, or -1 (the unmatched, shed first). */
  int classify(String method, PathPattern.Segments path, RequestInfo request) {
    for (int i = 0; i < classes.length; i++) {
      if (classes[i].matches(method, path, request)) {
        return i;
      }
    }
    return -1;
  }

  /**
   * Of two classes a request is in by two readings of its path, the one shed first (critical only
   * when both are), so that a spelling cannot move a request into a class it is not in.
   */
  int shedFirst(int a, int b) {
    int ra = rank(a);
    int rb = rank(b);
    if (ra == 0) {
      return b;
    }
    if (rb == 0) {
      return a;
    }
    return ra <= rb ? a : b;
  }

  boolean critical(int cls) {
    return cls >= 0 && classes[cls].critical();
  }

  String name(int cls) {
    return cls < 0 ? UNMATCHED : classes[cls].name();
  }

  int rank(int cls) {
    return cls < 0 ? 1 : rankOf[cls];
  }
}
