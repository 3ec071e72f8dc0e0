package dev.sluice.bench;

import dev.sluice.Outcome;
import dev.sluice.Slots;
import dev.sluice.http.RequestInfo;
import dev.sluice.http.RequestLimiter;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/** Each thread's reused outcome and request, for a request's way in and out of a limiter. */
@State(Scope.Thread)
public class BenchCaller {
  final Outcome outcome = new Outcome();
  final RequestInfo request = new BenchRequest("/api/v1/slow");

  /** Decides the request, then releases what it holds, as its completion would. */
  boolean inAndOut(RequestLimiter limiter) {
    boolean allowed = limiter.decide(request, outcome);
    Slots s = limiter.slots(outcome);
    s.release();
    return allowed && s.holds();
  }
}
