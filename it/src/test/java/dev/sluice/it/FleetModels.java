package dev.sluice.it;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The exact models the fleet harness judges a run by, one client at a time, each request in the
 * order that client sent it. A request was decided at some instant between its sending and its
 * answer (widened by {@link #EPSILON_MILLIS}, what instances' measurements of memcached's clock may
 * disagree by): a model keeps every state the store may be in, and a request whose outcome no state
 * allows is a violation: <em>over-admitted</em> (admitted where the model refuses) or <em>wrongly
 * refused</em> (refused where it admits).
 *
 * <p>Faults are what the product says they are: a memcached restart or eviction may reset a counter
 * (while an instance's deny cache, which remembers the client over its limit, may go on refusing it
 * until it would have passed); while memcached is unreachable (and a breaker delay after), a
 * request may be decided without the store ({@code onStoreFailure: allow}: a 200 without rate-limit
 * headers), and may still be counted late; a request to an instance being killed may get no answer.
 */
final class FleetModels {

  static final long EPSILON_MILLIS = 90;

  /** After a store fault, how long instances may still decide without it (breaker, reconnect). */
  static final long GRACE_MILLIS = 3_000;

  private FleetModels() {}

  /** What a model found: violations, and the figures the report prints. */
  static final class Verdict {
    final List<String> violations = new ArrayList<>();
    int requests;
    int admitted;
    int refused;
    int uncounted;
    int unanswered;
    int overAdmitted;
    int wronglyRefused;

    /** The fleet clock's difference from the host's that the check settled on, if it searched. */
    Long fleetDelta;

    void add(Verdict v) {
      violations.addAll(v.violations);
      requests += v.requests;
      admitted += v.admitted;
      refused += v.refused;
      uncounted += v.uncounted;
      unanswered += v.unanswered;
      overAdmitted += v.overAdmitted;
      wronglyRefused += v.wronglyRefused;
    }

    @Override
    public String toString() {
      return requests
          + " requests: "
          + admitted
          + " admitted ("
          + uncounted
          + " without the store), "
          + refused
          + " refused, "
          + unanswered
          + " unanswered; "
          + overAdmitted
          + " over-admitted, "
          + wronglyRefused
          + " wrongly refused, "
          + violations.size()
          + " violations"
          + (fleetDelta == null ? "" : " (on a fleet clock " + fleetDelta + " ms from the host's)");
    }
  }

  /** The faults of a run, as windows of time in which each effect was possible. */
  record Faults(List<FleetRun.Happened> happened) {

    /** Whether a counter may have been lost between {@code from} and {@code to}. */
    boolean resetBetween(long from, long to) {
      return happened.stream()
          .anyMatch(
              h ->
                  (h.kind() == FleetSchedule.Kind.RESTART_MEMCACHED
                          || h.kind() == FleetSchedule.Kind.EVICT)
                      && h.fromMillis() <= to
                      && h.toMillis() >= from);
    }

    /**
     * Whether a request sent in {@code [from, to]} fell while the fleet may still disagree on
     * memcached's tick: from a restart or a stall (which moves the tick) until {@link
     * FleetRun#REMEASURE_MILLIS} after it, or after the faults that then kept the instances from
     * measuring it ({@link FleetRun#measuredBy}), each instance on the old phase or the new one. A
     * restarted memcached starts empty, so no count the model could hold the fleet to survives it
     * anyway.
     */
    boolean clockChangingDuring(long from, long to) {
      return happened.stream()
          .anyMatch(
              h ->
                  (h.kind() == FleetSchedule.Kind.RESTART_MEMCACHED
                          || h.kind() == FleetSchedule.Kind.STALL)
                      && h.fromMillis() <= to
                      && FleetRun.measuredBy(happened, h.backMillis(), h.toMillis()) >= from);
    }

    /** Whether the store may have been unreachable for a request sent in {@code [from, to]}. */
    boolean storeDownDuring(long from, long to) {
      return happened.stream()
          .anyMatch(
              h ->
                  (h.kind() == FleetSchedule.Kind.RESTART_MEMCACHED
                          || h.kind() == FleetSchedule.Kind.FLAP
                          || h.kind() == FleetSchedule.Kind.STALL)
                      && h.fromMillis() <= to
                      && h.toMillis() + GRACE_MILLIS >= from);
    }

    /** Whether instance {@code i} was being killed or started during {@code [from, to]}. */
    boolean instanceDownDuring(int i, long from, long to) {
      return happened.stream()
          .anyMatch(
              h ->
                  h.kind() == FleetSchedule.Kind.KILL_INSTANCE
                      && h.instance() == i
                      && h.fromMillis() <= to
                      && h.toMillis() >= from);
    }
  }

  /** A rate-limit model: the states a client's counters may be in, and one step of it. */
  interface Model<S> {
    S fresh();

    /** The states after a reset of {@code s} (counters lost, any of them). */
    List<S> reset(S s);

    /**
     * The states {@code s} may go to for a request decided in {@code [lo, hi]}, for each possible
     * outcome: admitted (counted) or refused.
     */
    List<S> step(S s, long lo, long hi, boolean admitted);

    /**
     * The same possibilities in fewer states, where the model can join them exactly: a request
     * either outcome explains keeps every state and adds each one's successor, so without joining,
     * a client's states could double with each such request.
     */
    default Set<S> merge(Set<S> states) {
      return states;
    }
  }

  /**
   * Checks every client's requests of {@code run} against {@code model}, on memcached's clock as
   * the harness measured it and, failing that, on the one fleet clock (the host's plus a constant,
   * searched from −1.5 s to +0.5 s in 10 ms steps, in place of the measured one) that explains the
   * most outcomes: the fleet decides on the offsets its instances measured, which may differ from
   * the harness's by a constant (the guarantee is one clock for the fleet, not memcached's exact
   * tick).
   */
  static <S> Verdict check(FleetRun run, Model<S> model) {
    Verdict best = check(run, model, null);
    for (long d = -1_500; d <= 500 && !best.violations.isEmpty(); d += 10) {
      Verdict v = check(run, model, d);
      if (v.violations.size() < best.violations.size()) {
        best = v;
      }
    }
    return best;
  }

  private static <S> Verdict check(FleetRun run, Model<S> model, Long fleetDelta) {
    Faults faults = new Faults(List.copyOf(run.faults));
    Map<String, List<FleetRun.Sent>> byClient = new HashMap<>();
    for (FleetRun.Sent s : List.copyOf(run.sent)) {
      byClient.computeIfAbsent(s.client(), k -> new ArrayList<>()).add(s);
    }
    Verdict verdict = new Verdict();
    verdict.fleetDelta = fleetDelta;
    for (List<FleetRun.Sent> requests : byClient.values()) {
      requests.sort(Comparator.comparingLong(FleetRun.Sent::sentMillis));
      Set<S> states = new LinkedHashSet<>(List.of(model.fresh()));
      long previous = Long.MIN_VALUE;
      for (FleetRun.Sent r : requests) {
        verdict.requests++;
        List<Long> deltas = fleetDelta == null ? run.deltas(r.sentMillis()) : List.of(fleetDelta);
        long lo = r.sentMillis() - EPSILON_MILLIS;
        long hi = r.answeredMillis() + EPSILON_MILLIS;
        if (faults.resetBetween(previous, hi)) {
          Set<S> widened = new LinkedHashSet<>(states);
          for (S s : states) {
            widened.addAll(model.reset(s));
          }
          states = model.merge(widened);
        }
        previous = r.sentMillis();
        Set<S> next = new LinkedHashSet<>();
        int status = r.answer().status();
        if (faults.clockChangingDuring(r.sentMillis(), r.answeredMillis())
            && (status == 200 || status == 429)) {
          // Either outcome: instances on two ticks of an emptied store (RELIABILITY.md, one clock).
          verdict.admitted += status == 200 ? 1 : 0;
          verdict.refused += status == 429 ? 1 : 0;
          next.addAll(states);
          states.forEach(s -> next.addAll(forced(model, s, lo, hi, deltas, true)));
          states = model.merge(next);
          continue;
        }
        if (status == 200 && r.answer().counted()) {
          verdict.admitted++;
          states.forEach(s -> next.addAll(step(model, s, lo, hi, deltas, true)));
          if (next.isEmpty()) {
            verdict.overAdmitted++;
            verdict.violations.add("over-admitted: " + r + "; the model's states: " + states);
            states.forEach(s -> next.addAll(forced(model, s, lo, hi, deltas, true)));
          }
        } else if (status == 429) {
          verdict.refused++;
          states.forEach(s -> next.addAll(step(model, s, lo, hi, deltas, false)));
          if (next.isEmpty()) {
            verdict.wronglyRefused++;
            verdict.violations.add("wrongly refused: " + r + "; the model's states: " + states);
            states.forEach(s -> next.addAll(forced(model, s, lo, hi, deltas, false)));
          }
        } else if (status == 200 || status == 0) {
          if (status == 200) {
            verdict.admitted++;
            verdict.uncounted++;
            if (!faults.storeDownDuring(r.sentMillis(), r.answeredMillis())) {
              verdict.violations.add("decided without the store, which was up: " + r);
            }
          } else {
            verdict.unanswered++;
            if (!faults.instanceDownDuring(r.instance(), r.sentMillis(), r.answeredMillis())) {
              verdict.violations.add("no answer from a live instance: " + r);
            }
          }
          // Not counted, or counted late, or (no answer) either outcome.
          next.addAll(states);
          states.forEach(s -> next.addAll(forced(model, s, lo, hi, deltas, true)));
        } else {
          verdict.violations.add("neither 200 nor 429: " + r);
          next.addAll(states);
        }
        states = model.merge(next);
      }
    }
    return verdict;
  }

  /** One step from {@code s}, on memcached's clock as each of {@code deltas} places it. */
  private static <S> List<S> step(
      Model<S> model, S s, long lo, long hi, List<Long> deltas, boolean admitted) {
    List<S> out = new ArrayList<>();
    for (long d : deltas) {
      out.addAll(model.step(s, lo + d, hi + d, admitted));
    }
    return out;
  }

  /** The state after an outcome the model did not allow, so checking goes on after it. */
  @SuppressWarnings("unchecked")
  private static <S> List<S> forced(
      Model<S> model, S s, long lo, long hi, List<Long> deltas, boolean admitted) {
    List<S> out = new ArrayList<>();
    if (model instanceof Forcing<?> f) {
      for (long d : deltas) {
        out.addAll(((Forcing<S>) f).force(s, lo + d, hi + d, admitted));
      }
    }
    return out;
  }

  /** A model that can apply an outcome its rule would not have given. */
  interface Forcing<S> {
    List<S> force(S s, long lo, long hi, boolean admitted);
  }

  // ---- fixed window --------------------------------------------------------------------------

  /**
   * A fixed window's count; {@code denying}: counters were lost in this window, and an instance
   * whose deny cache saw the client over its limit may still refuse it until the window ends;
   * {@code previousFull}: the window before this one ended at its limit (or denying), so a refusal
   * an instance places there, within the clock's error of this window's start, is its due.
   */
  record Fixed(long window, long count, boolean denying, boolean previousFull) {}

  /** A fixed window: {@code limit} per window of {@code period} ms; a refusal is refunded. */
  record FixedModel(long limit, long period) implements Model<Fixed>, Forcing<Fixed> {
    @Override
    public Fixed fresh() {
      return new Fixed(Long.MIN_VALUE, 0, false, false);
    }

    @Override
    public List<Fixed> reset(Fixed s) {
      return List.of(new Fixed(s.window(), 0, true, s.previousFull()));
    }

    /** The state of window {@code w}, at or after {@code s}'s. */
    private Fixed in(Fixed s, long w) {
      if (w == s.window()) {
        return s;
      }
      boolean full = w == s.window() + 1 && (s.count() >= limit || s.denying());
      return new Fixed(w, 0, false, full);
    }

    @Override
    public List<Fixed> step(Fixed s, long lo, long hi, boolean admitted) {
      List<Fixed> out = new ArrayList<>();
      for (long w = Math.floorDiv(lo, period); w <= Math.floorDiv(hi, period); w++) {
        if (w < s.window()) {
          // This client's earlier request was decided in a later window. An instance whose clock
          // is behind the one that decided it may still refuse in the full window before.
          if (w == s.window() - 1 && !admitted && s.previousFull()) {
            out.add(s);
          }
          continue;
        }
        Fixed in = in(s, w);
        boolean pass = in.count() + 1 <= limit;
        if (pass == admitted) {
          out.add(
              new Fixed(
                  w, admitted ? in.count() + 1 : in.count(), in.denying(), in.previousFull()));
        } else if (!admitted && in.denying()) {
          out.add(in);
        }
      }
      return out;
    }

    @Override
    public List<Fixed> force(Fixed s, long lo, long hi, boolean admitted) {
      Fixed in = in(s, Math.max(s.window(), Math.floorDiv(hi, period)));
      return List.of(
          new Fixed(
              in.window(),
              admitted ? in.count() + 1 : in.count(),
              in.denying(),
              in.previousFull()));
    }
  }

  // ---- sliding window ------------------------------------------------------------------------

  /**
   * A sliding window's two counts; {@code denyThrough}: counters were lost, and an instance's deny
   * cache may still refuse the client until that window ends (a sliding window's retry instant can
   * fall in the next window).
   */
  record Sliding(long window, long current, long previous, long denyThrough) {}

  /**
   * The sliding window (Cloudflare's counter): admitted iff {@code previous × (1 − f) + current + 1
   * ≤ limit}, {@code f} the elapsed fraction of the current window; a refusal is refunded.
   */
  record SlidingModel(long limit, long period) implements Model<Sliding>, Forcing<Sliding> {
    @Override
    public Sliding fresh() {
      return new Sliding(Long.MIN_VALUE, 0, 0, Long.MIN_VALUE);
    }

    @Override
    public List<Sliding> reset(Sliding s) {
      long deny = s.window() == Long.MIN_VALUE ? Long.MIN_VALUE : s.window() + 1;
      return List.of(
          new Sliding(s.window(), 0, s.previous(), deny),
          new Sliding(s.window(), s.current(), 0, deny),
          new Sliding(s.window(), 0, 0, deny));
    }

    private Sliding at(Sliding s, long w) {
      if (w == s.window()) {
        return s;
      }
      return new Sliding(w, 0, w == s.window() + 1 ? s.current() : 0, s.denyThrough());
    }

    private boolean pass(Sliding s, long t) {
      double f = (t - s.window() * period) / (double) period;
      return s.previous() * (1 - f) + s.current() + 1 <= limit + 1e-9;
    }

    @Override
    public List<Sliding> step(Sliding s, long lo, long hi, boolean admitted) {
      List<Sliding> out = new ArrayList<>();
      for (long w = Math.floorDiv(lo, period); w <= Math.floorDiv(hi, period); w++) {
        if (w < s.window()) {
          continue;
        }
        Sliding in = at(s, w);
        long from = Math.max(lo, w * period);
        long to = Math.min(hi, (w + 1) * period - 1);
        // The estimate falls as the window goes on: the earliest instant is the strictest.
        boolean possible = admitted ? pass(in, to) : !pass(in, from) || w <= in.denyThrough();
        if (possible) {
          out.add(
              admitted ? new Sliding(w, in.current() + 1, in.previous(), in.denyThrough()) : in);
        }
      }
      return out;
    }

    @Override
    public List<Sliding> force(Sliding s, long lo, long hi, boolean admitted) {
      Sliding in = at(s, Math.max(s.window(), Math.floorDiv(hi, period)));
      return List.of(
          admitted
              ? new Sliding(in.window(), in.current() + 1, in.previous(), in.denyThrough())
              : in);
    }
  }

  // ---- token bucket (GCRA) -------------------------------------------------------------------

  /** The theoretical arrival time, known to lie in {@code [earliest, latest]} (ms). */
  record Tat(double earliest, double latest) {}

  /**
   * GCRA: a bucket of {@code burst} tokens refilled one per {@code interval} ms. A request at
   * {@code t} is admitted iff {@code max(TAT, t) + interval ≤ t + burst × interval}, and moves the
   * TAT there; a refusal leaves it.
   */
  record GcraModel(long burst, double interval) implements Model<Tat>, Forcing<Tat> {
    @Override
    public Tat fresh() {
      return new Tat(Double.NEGATIVE_INFINITY, Double.NEGATIVE_INFINITY);
    }

    @Override
    public List<Tat> reset(Tat s) {
      return List.of(new Tat(Double.NEGATIVE_INFINITY, s.latest()));
    }

    @Override
    public List<Tat> step(Tat s, long lo, long hi, boolean admitted) {
      return step(s, (double) lo, (double) hi, admitted);
    }

    private List<Tat> step(Tat s, double lo, double hi, boolean admitted) {
      double slack = (burst - 1) * interval;
      if (admitted) {
        // Some TAT and instant with TAT ≤ t + slack.
        if (s.earliest() > hi + slack) {
          return List.of();
        }
        double latest = Math.min(s.latest(), hi + slack);
        return List.of(
            new Tat(Math.max(s.earliest(), lo) + interval, Math.max(latest, hi) + interval));
      }
      if (s.latest() <= lo + slack) {
        return List.of();
      }
      return List.of(new Tat(Math.max(s.earliest(), lo + slack), s.latest()));
    }

    /**
     * Overlapping intervals joined: each state says only that the TAT lies in its interval, so two
     * that overlap say exactly what their join says.
     */
    @Override
    public Set<Tat> merge(Set<Tat> states) {
      if (states.size() < 2) {
        return states;
      }
      List<Tat> sorted = new ArrayList<>(states);
      sorted.sort(Comparator.comparingDouble(Tat::earliest));
      Set<Tat> out = new LinkedHashSet<>();
      Tat run = sorted.get(0);
      for (Tat t : sorted.subList(1, sorted.size())) {
        if (t.earliest() <= run.latest()) {
          run = new Tat(run.earliest(), Math.max(run.latest(), t.latest()));
        } else {
          out.add(run);
          run = t;
        }
      }
      out.add(run);
      return out;
    }

    @Override
    public List<Tat> force(Tat s, long lo, long hi, boolean admitted) {
      return admitted
          ? List.of(
              new Tat(
                  Math.max(s.earliest(), (double) lo) + interval,
                  Math.max(s.latest(), (double) hi) + interval))
          : List.of(s);
    }
  }

  // ---- concurrency ---------------------------------------------------------------------------

  /**
   * The set in flight: with {@code limit} slots, a request is admitted iff fewer than {@code limit}
   * of its client's requests hold one when it is decided. An admitted request holds its slot at
   * least from {@code answered − hold} (its decision came before the resource's wait) to {@code
   * sent + hold}, and at most over {@code [sent, answered]}.
   */
  static Verdict checkConcurrency(FleetRun run, long limit) {
    java.util.function.ToLongFunction<FleetRun.Sent> hold = FleetRun.Sent::holdMillis;
    Map<String, List<FleetRun.Sent>> byClient = new HashMap<>();
    for (FleetRun.Sent s : List.copyOf(run.sent)) {
      byClient.computeIfAbsent(s.client(), k -> new ArrayList<>()).add(s);
    }
    Verdict verdict = new Verdict();
    long e = EPSILON_MILLIS;
    for (List<FleetRun.Sent> requests : byClient.values()) {
      for (FleetRun.Sent r : requests) {
        verdict.requests++;
        if (r.answer().status() == 200) {
          verdict.admitted++;
          // Decided in [sent, answered − hold]: over-admitted if `limit` others surely held a
          // slot over all of it.
          long from = r.sentMillis();
          long to = r.answeredMillis() - hold.applyAsLong(r);
          long sure =
              requests.stream()
                  .filter(o -> !o.equals(r) && o.answer().status() == 200)
                  .filter(
                      o ->
                          o.answeredMillis() - hold.applyAsLong(o) + e <= from
                              && o.sentMillis() + hold.applyAsLong(o) - e >= to)
                  .count();
          if (sure >= limit) {
            verdict.overAdmitted++;
            verdict.violations.add("over-admitted: " + r + " while " + sure + " surely held slots");
          }
        } else if (r.answer().status() == 429) {
          verdict.refused++;
          // Refused: some instant of [sent, answered] must have had `limit` possibly held.
          long possible =
              requests.stream()
                  .filter(o -> !o.equals(r) && o.answer().status() == 200)
                  .filter(
                      o ->
                          o.sentMillis() - e <= r.answeredMillis()
                              && o.answeredMillis() + e >= r.sentMillis())
                  .count();
          if (possible < limit) {
            verdict.wronglyRefused++;
            verdict.violations.add(
                "wrongly refused: " + r + " while at most " + possible + " could hold slots");
          }
        } else {
          verdict.violations.add("neither 200 nor 429: " + r);
        }
      }
    }
    return verdict;
  }

  // ---- a fleet-wide bound per window ---------------------------------------------------------

  /**
   * The most any client had admitted in one fixed window of {@code period}, across the fleet,
   * counting only requests surely decided in it; a window over {@code bound} is a violation. The
   * fleet clock is found as {@link #check(FleetRun, Model)} finds it.
   */
  static Verdict checkWindowBound(FleetRun run, long period, long bound) {
    Verdict best = checkWindowBound(run, period, bound, null);
    for (long d = -1_500; d <= 500 && !best.violations.isEmpty(); d += 10) {
      Verdict v = checkWindowBound(run, period, bound, d);
      if (v.violations.size() < best.violations.size()) {
        best = v;
      }
    }
    return best;
  }

  private static Verdict checkWindowBound(FleetRun run, long period, long bound, Long fleetDelta) {
    Map<String, Map<Long, Integer>> admitted = new HashMap<>();
    Verdict verdict = new Verdict();
    verdict.fleetDelta = fleetDelta;
    for (FleetRun.Sent r : List.copyOf(run.sent)) {
      verdict.requests++;
      if (r.answer().status() == 200) {
        verdict.admitted++;
        List<Long> deltas = fleetDelta == null ? run.deltas(r.sentMillis()) : List.of(fleetDelta);
        long min = deltas.stream().mapToLong(Long::longValue).min().orElseThrow();
        long max = deltas.stream().mapToLong(Long::longValue).max().orElseThrow();
        long w = Math.floorDiv(r.sentMillis() + min - EPSILON_MILLIS, period);
        if (w == Math.floorDiv(r.answeredMillis() + max + EPSILON_MILLIS, period)) {
          admitted.computeIfAbsent(r.client(), k -> new HashMap<>()).merge(w, 1, Integer::sum);
        }
      } else if (r.answer().status() == 429) {
        verdict.refused++;
      } else {
        verdict.violations.add("neither 200 nor 429: " + r);
      }
    }
    admitted.forEach(
        (client, windows) ->
            windows.forEach(
                (w, n) -> {
                  if (n > bound) {
                    verdict.overAdmitted += (int) (n - bound);
                    verdict.violations.add(
                        client + " had " + n + " admitted in window " + w + ", over " + bound);
                  }
                }));
    return verdict;
  }
}
