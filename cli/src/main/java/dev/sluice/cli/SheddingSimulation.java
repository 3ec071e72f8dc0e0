package dev.sluice.cli;

import dev.sluice.shedding.LoadShedder;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;

/**
 * A deterministic incident for the worker-utilization shedder, second by second on a simulated
 * clock: the tool for seeing what its delay and ramp do before an incident does. The instance
 * serves {@code capacity} requests a second at utilization 1; demand is {@code normal} times that,
 * then {@code overload} times that from {@code incidentAt} for {@code incidentFor}, then normal
 * again. Each class's share of demand is fixed; a {@link LoadShedder} (its real controller, fed the
 * utilization through a supplier) decides each class's shed fraction, and what it admits beyond
 * capacity fails (times out), whatever its class.
 */
final class SheddingSimulation {

  private SheddingSimulation() {}

  /** A class of the simulated traffic: its share of demand, and its shedding rank (0 critical). */
  public record Traffic(String name, double share, int rank) {}

  /** The incident. */
  public record Incident(
      double normal,
      double overload,
      Duration incidentAt,
      Duration incidentFor,
      Duration length,
      List<Traffic> traffic) {

    /**
     * The run in docs/RELIABILITY.md: half of capacity, then 4× capacity for 5 minutes from minute
     * 1, for 12 minutes; 10 % critical, 20 % writes, 40 % reads, 30 % test mode.
     */
    public static Incident example() {
      return new Incident(
          0.5,
          4,
          Duration.ofMinutes(1),
          Duration.ofMinutes(5),
          Duration.ofMinutes(12),
          List.of(
              new Traffic("critical", 0.1, 0),
              new Traffic("writes", 0.2, 3),
              new Traffic("reads", 0.4, 2),
              new Traffic("test", 0.3, 1)));
    }
  }

  /**
   * One second: demand (× capacity), utilization, the shedding amount, and per class the fraction
   * shed and the fraction of its demand served.
   */
  @SuppressWarnings("ArrayRecordComponent") // one value per class, by rank; never compared
  public record Point(
      long second,
      double demand,
      double utilization,
      double amount,
      double[] shed,
      double[] success) {}

  /** Runs the incident against a worker shedder with the given delay and ramp. */
  public static List<Point> run(Incident incident, Duration delay, Duration ramp) {
    long[] now = {Instant.parse("2026-01-01T00:00:00Z").toEpochMilli()};
    double[] utilization = {0};
    InstantSource clock = () -> Instant.ofEpochMilli(now[0]);
    LoadShedder shedder =
        LoadShedder.builder()
            .utilization(() -> utilization[0])
            .clock(clock)
            .delay(delay)
            .ramp(ramp)
            .build();
    List<Traffic> traffic = incident.traffic();
    int ranks = traffic.stream().mapToInt(Traffic::rank).max().orElse(0);
    long start = incident.incidentAt().toSeconds();
    long end = start + incident.incidentFor().toSeconds();
    List<Point> out = new ArrayList<>();
    for (long s = 0; s < incident.length().toSeconds(); s++) {
      double demand = s >= start && s < end ? incident.overload() : incident.normal();
      double amount = shedder.amount();
      double[] shed = new double[traffic.size()];
      double admitted = 0;
      for (int k = 0; k < shed.length; k++) {
        Traffic t = traffic.get(k);
        shed[k] = shedder.shedChance(t.rank(), ranks);
        admitted += demand * t.share() * (1 - shed[k]);
      }
      double served = admitted <= 1 ? 1 : 1 / admitted;
      double[] success = new double[shed.length];
      for (int k = 0; k < shed.length; k++) {
        success[k] = (1 - shed[k]) * served;
      }
      utilization[0] = Math.min(1, admitted);
      out.add(new Point(s, demand, utilization[0], amount, shed, success));
      now[0] += 1_000;
    }
    return out;
  }
}
