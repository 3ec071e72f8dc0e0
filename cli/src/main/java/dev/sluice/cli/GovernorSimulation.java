package dev.sluice.cli;

import dev.sluice.control.Governor;
import dev.sluice.control.Knobs;
import dev.sluice.spi.SharedValues;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.UnaryOperator;

/**
 * A deterministic run of a {@link Governor} against a simulated backend, second by second, on a
 * simulated clock: the tool for choosing its gains before it steers anything real.
 *
 * <p>The backend's load follows {@code loadPerRate × cost × rate} with a first-order lag ({@code
 * timeConstant}); the governor sees it as a metrics system shows it, {@code signalLag} late and
 * refreshed every {@code scrape}. At {@code spikeAt} the work gets {@code spike} times costlier, as
 * when a reindexer reaches documents with a thousand recipients. The rate the backend sees is the
 * throttle's {@code rate} knob, as the governor wrote it.
 */
final class GovernorSimulation {

  private GovernorSimulation() {}

  /** The simulated backend and its metrics. */
  public record Plant(
      double loadPerRate,
      Duration timeConstant,
      Duration signalLag,
      Duration scrape,
      Duration spikeAt,
      double spike,
      Duration length) {

    /**
     * The run in docs/GOVERNOR.md: 300/s makes a load of 1.5, metrics 15 s late and scraped every
     * 15 s, a 30 s time constant, and the work 5× costlier from minute 20 of 60.
     */
    public static Plant example() {
      return new Plant(
          0.005,
          Duration.ofSeconds(30),
          Duration.ofSeconds(15),
          Duration.ofSeconds(15),
          Duration.ofMinutes(20),
          5,
          Duration.ofMinutes(60));
    }
  }

  /** One second of the run: the true load, what the governor saw, and the rate in force. */
  public record Point(long second, double load, double signal, double rate, boolean tripped) {}

  /**
   * Runs {@code governor} (configured by the caller: setpoint, gains, max rate, trip level,
   * interval, ramp) against {@code plant}, starting at rate 0.
   */
  public static List<Point> run(Plant plant, UnaryOperator<Governor.Builder> governor) {
    MapValues values = new MapValues();
    long[] now = {0};
    InstantSource clock = () -> Instant.ofEpochMilli(now[0]);
    int length = (int) plant.length.toSeconds();
    double[] load = new double[length + 1];
    double[] signal = {0};
    Governor g =
        governor
            .apply(
                Governor.builder(values, "sim")
                    .clock(clock)
                    .signal(() -> signal[0])
                    .owner("simulation"))
            .build();
    long every = Math.max(1, g.interval().toSeconds());
    long lag = plant.signalLag.toSeconds();
    long scrape = Math.max(1, plant.scrape.toSeconds());
    double tau = plant.timeConstant.toMillis() / 1000.0;
    List<Point> out = new ArrayList<>(length);
    double rate = 0;
    for (int t = 0; t < length; t++) {
      now[0] = t * 1000L;
      if (t % scrape == 0) {
        signal[0] = load[(int) Math.max(0, t - lag)];
      }
      if (t % every == 0) {
        g.tick();
        rate = values.rate();
      }
      double cost = t >= plant.spikeAt.toSeconds() ? plant.spike : 1;
      double target = plant.loadPerRate * cost * rate;
      load[t + 1] = load[t] + (target - load[t]) * Math.min(1, 1 / tau);
      out.add(new Point(t, load[t], signal[0], rate, g.state().tripped()));
    }
    return out;
  }

  /** The knobs and the lease of one simulated instance. */
  private static final class MapValues implements SharedValues {
    private final Map<String, Versioned> map = new HashMap<>();
    private long versions;

    @Override
    public Optional<Versioned> get(String name) {
      return Optional.ofNullable(map.get(name));
    }

    @Override
    public boolean compareAndSet(String name, long version, String value, Duration ttl) {
      Versioned v = map.get(name);
      if ((v == null ? 0 : v.version()) != version) {
        return false;
      }
      map.put(name, new Versioned(value, ++versions));
      return true;
    }

    double rate() {
      Versioned v = map.get(Knobs.VALUE_NAME);
      return v == null ? 0 : Knobs.parse(v.value()).throttleRate("sim").orElse(0);
    }
  }
}
