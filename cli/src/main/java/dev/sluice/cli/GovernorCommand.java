package dev.sluice.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYSeries;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code sluice governor}: runs a governor against a simulated backend (a 5× spike, metrics that
 * arrive late), so its gains can be tuned before it steers anything real.
 */
@Command(
    name = "governor",
    mixinStandardHelpOptions = true,
    description = {
      "Simulate a governor through a load spike: a table by minute, and --plot for a chart of",
      "load, signal, rate and setpoint. Change the gains until the run holds the setpoint."
    })
final class GovernorCommand implements Callable<Integer> {

  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @Option(names = "--setpoint", defaultValue = "2", description = "Load to hold (default 2).")
  double setpoint;

  @Option(names = "--kp", defaultValue = "24", description = "Proportional gain (default 24).")
  double kp;

  @Option(names = "--ki", defaultValue = "0.8", description = "Integral gain, /s (default 0.8).")
  double ki;

  @Option(names = "--kd", defaultValue = "0", description = "Derivative gain, s (default 0).")
  double kd;

  @Option(names = "--max-rate", defaultValue = "300", description = "Highest rate (default 300).")
  double maxRate;

  @Option(names = "--trip", defaultValue = "4", description = "Breaker's trip level (default 4).")
  double trip;

  @Option(
      names = "--interval",
      defaultValue = "5s",
      converter = ThresholdsCommand.PeriodConverter.class,
      description = "Control interval (default 5s).")
  Duration interval;

  @Option(
      names = "--ramp",
      defaultValue = "2m",
      description = "Fastest rise from 0 to the max rate (default 2m; 0s for none).")
  String ramp;

  @Option(
      names = "--lag",
      defaultValue = "15s",
      converter = ThresholdsCommand.PeriodConverter.class,
      description = "How late the load signal is (default 15s).")
  Duration lag;

  @Option(
      names = "--load-per-rate",
      defaultValue = "0.005",
      description = "Load that one permit/s makes before the spike (default 0.005).")
  double loadPerRate;

  @Option(names = "--spike", defaultValue = "5", description = "How much costlier (default 5).")
  double spike;

  @Option(
      names = "--every",
      defaultValue = "1m",
      converter = ThresholdsCommand.PeriodConverter.class,
      description = "A table row this often (default 1m).")
  Duration every;

  @Option(names = "--plot", description = "Write a PNG of the run here.")
  Path plot;

  @Override
  public Integer call() throws IOException {
    GovernorSimulation.Plant e = GovernorSimulation.Plant.example();
    GovernorSimulation.Plant plant =
        new GovernorSimulation.Plant(
            loadPerRate, e.timeConstant(), lag, e.scrape(), e.spikeAt(), spike, e.length());
    Duration rampUp =
        ramp.equals("0") || ramp.equals("0s")
            ? Duration.ZERO
            : new ThresholdsCommand.PeriodConverter().convert(ramp);
    List<GovernorSimulation.Point> run;
    try {
      run =
          GovernorSimulation.run(
              plant,
              b ->
                  b.setpoint(setpoint)
                      .gains(kp, ki, kd)
                      .maxRate(maxRate)
                      .tripLevel(trip)
                      .interval(interval)
                      .rampUp(rampUp));
    } catch (IllegalArgumentException x) {
      throw new Sluice.UsageError(x.getMessage());
    }
    PrintWriter out = spec.commandLine().getOut();
    out.printf(
        Locale.ROOT,
        "governor: setpoint %s, kp %s, ki %s, kd %s, max %s/s, trip %s, ramp %s; signal %s s late,"
            + " work %s× costlier from minute %d%n",
        setpoint,
        kp,
        ki,
        kd,
        maxRate,
        trip,
        ramp,
        lag.toSeconds(),
        spike,
        plant.spikeAt().toMinutes());
    out.println("| minute | load | signal | rate (/s) | breaker |");
    out.println("|---:|---:|---:|---:|---|");
    int step = (int) Math.max(1, every.toSeconds());
    for (int i = 0; i < run.size(); i += step) {
      GovernorSimulation.Point p = run.get(i);
      boolean tripped =
          run.subList(i, Math.min(run.size(), i + step)).stream().anyMatch(x -> x.tripped());
      out.printf(
          Locale.ROOT,
          "| %.1f | %.2f | %.2f | %.1f | %s |%n",
          i / 60.0,
          p.load(),
          p.signal(),
          p.rate(),
          tripped ? "tripped" : "");
    }
    int settle = (int) plant.spikeAt().toSeconds() + 600;
    double band = 0;
    double lo = Double.MAX_VALUE;
    double hi = 0;
    for (GovernorSimulation.Point p : run.subList(Math.min(settle, run.size()), run.size())) {
      band = Math.max(band, Math.abs(p.load() - setpoint));
      lo = Math.min(lo, p.rate());
      hi = Math.max(hi, p.rate());
    }
    out.printf(
        Locale.ROOT,
        "from 10 minutes after the spike: load within ±%.1f%% of the setpoint, rate %.1f..%.1f/s%n",
        100 * band / setpoint,
        lo,
        hi);
    if (plot != null) {
      XYChart c = Charts.chart("Governor through a " + spike + "× spike", "minute", "load");
      double[] t = new double[run.size()];
      double[] load = new double[run.size()];
      double[] signal = new double[run.size()];
      double[] rate = new double[run.size()];
      double[] sp = new double[run.size()];
      for (int i = 0; i < run.size(); i++) {
        GovernorSimulation.Point p = run.get(i);
        t[i] = p.second() / 60.0;
        load[i] = p.load();
        signal[i] = p.signal();
        rate[i] = p.rate();
        sp[i] = setpoint;
      }
      c.addSeries("load", t, load).setMarker(org.knowm.xchart.style.markers.SeriesMarkers.NONE);
      c.addSeries("signal (as the governor saw it)", t, signal)
          .setMarker(org.knowm.xchart.style.markers.SeriesMarkers.NONE);
      c.addSeries("setpoint", t, sp).setMarker(org.knowm.xchart.style.markers.SeriesMarkers.NONE);
      XYSeries r = c.addSeries("rate (/s, right axis)", t, rate);
      r.setMarker(org.knowm.xchart.style.markers.SeriesMarkers.NONE);
      r.setYAxisGroup(1);
      c.setYAxisGroupTitle(1, "rate (/s)");
      c.getStyler().setYAxisGroupPosition(1, org.knowm.xchart.style.Styler.YAxisPosition.Right);
      Charts.save(c, plot);
      out.println("wrote " + plot);
    }
    out.flush();
    return 0;
  }
}
