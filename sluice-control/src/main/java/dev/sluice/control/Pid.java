package dev.sluice.control;

/**
 * The governor's controller: a PID in velocity form with a circuit breaker. Each step moves the
 * output by {@code kp·Δe + ki·e·dt − kd·Δ²load/dt}, where {@code e = setpoint − load}; the output
 * itself is the only state, clamped to {@code [0, max]}, so it cannot wind up while it sits at a
 * bound. A rise is limited to {@code maxRise} per second, so a signal that arrives late cannot make
 * it overshoot faster than the ramp allows; a fall is never limited. A load at or above {@code
 * trip} sets the output to 0 at once; the PID takes over again from 0 once the load is back below
 * the trip level. Not thread-safe.
 */
final class Pid {

  final double setpoint;
  final double kp;
  final double ki;
  final double kd;
  final double max;
  final double trip;
  final double maxRise;

  private double output;
  private double lastError;
  private double lastLoad;
  private double lastLoad2;
  private int seen;
  private boolean tripped;

  Pid(
      double setpoint,
      double kp,
      double ki,
      double kd,
      double max,
      double trip,
      double maxRise,
      double initial) {
    this.setpoint = setpoint;
    this.kp = kp;
    this.ki = ki;
    this.kd = kd;
    this.max = max;
    this.trip = trip;
    this.maxRise = maxRise;
    this.output = Math.max(0, Math.min(max, initial));
  }

  /** The next output for a load read {@code dtSeconds} after the previous one. */
  double step(double load, double dtSeconds) {
    double e = setpoint - load;
    if (load >= trip) {
      tripped = true;
      output = 0;
    } else {
      tripped = false;
      double dt = Math.max(1e-3, dtSeconds);
      double du = ki * e * dt;
      if (seen >= 1) {
        du += kp * (e - lastError);
      }
      if (seen >= 2) {
        du -= kd * (load - 2 * lastLoad + lastLoad2) / dt;
      }
      double next = Math.max(0, Math.min(max, output + du));
      output = Math.min(next, output + maxRise * dt);
    }
    lastError = e;
    lastLoad2 = lastLoad;
    lastLoad = load;
    seen++;
    return output;
  }

  /** Starts again from {@code output}, with no history (a new leader takes over the rate). */
  void reset(double output) {
    this.output = Math.max(0, Math.min(max, output));
    this.seen = 0;
    this.tripped = false;
  }

  double output() {
    return output;
  }

  boolean tripped() {
    return tripped;
  }
}
