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
import org.knowm.xchart.style.markers.SeriesMarkers;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code sluice shedding}: runs the worker-utilization shedder through a simulated incident (four
 * times capacity for five minutes), so its delay and ramp can be chosen before an incident does.
 */
@Command(
    name = "shedding",
    mixinStandardHelpOptions = true,
    description = {
      "Simulate the worker-utilization shedder through an incident: a table of utilization, shed",
      "fraction and success per class, and --plot for a chart of it."
    })
final class SheddingCommand implements Callable<Integer> {

  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @Option(
      names = "--delay",
      defaultValue = "28s",
      converter = ThresholdsCommand.PeriodConverter.class,
      description = "Overload held this long before shedding starts (default 28s).")
  Duration delay;

  @Option(
      names = "--ramp",
      defaultValue = "2m",
      converter = ThresholdsCommand.PeriodConverter.class,
      description = "From no shedding to all, at the fastest (default 2m).")
  Duration ramp;

  @Option(
      names = "--overload",
      defaultValue = "4",
      description = "Demand during the incident, × capacity (default 4).")
  double overload;

  @Option(
      names = "--every",
      defaultValue = "30s",
      converter = ThresholdsCommand.PeriodConverter.class,
      description = "A table row this often (default 30s).")
  Duration every;

  @Option(names = "--plot", description = "Write a PNG of the run here.")
  Path plot;

  @Override
  public Integer call() throws IOException {
    SheddingSimulation.Incident e = SheddingSimulation.Incident.example();
    SheddingSimulation.Incident incident =
        new SheddingSimulation.Incident(
            e.normal(), overload, e.incidentAt(), e.incidentFor(), e.length(), e.traffic());
    List<SheddingSimulation.Point> run;
    try {
      run = SheddingSimulation.run(incident, delay, ramp);
    } catch (IllegalArgumentException x) {
      throw new Sluice.UsageError(x.getMessage());
    }
    List<SheddingSimulation.Traffic> traffic = incident.traffic();
    PrintWriter out = spec.commandLine().getOut();
    out.printf(
        Locale.ROOT,
        "worker shedder: delay %d s, ramp %d s; demand %.1f× capacity, %.0f× from minute %d for %d"
            + " minutes%n",
        delay.toSeconds(),
        ramp.toSeconds(),
        incident.normal(),
        overload,
        incident.incidentAt().toMinutes(),
        incident.incidentFor().toMinutes());
    StringBuilder head = new StringBuilder("| time | demand | utilization |");
    StringBuilder rule = new StringBuilder("|---:|---:|---:|");
    for (SheddingSimulation.Traffic t : traffic) {
      head.append(" ").append(t.name()).append(" shed | ").append(t.name()).append(" served |");
      rule.append("---:|---:|");
    }
    out.println(head);
    out.println(rule);
    int step = (int) Math.max(1, every.toSeconds());
    for (int i = 0; i < run.size(); i += step) {
      SheddingSimulation.Point p = run.get(i);
      StringBuilder row =
          new StringBuilder(
              String.format(
                  Locale.ROOT,
                  "| %d:%02d | %.1f× | %.2f |",
                  p.second() / 60,
                  p.second() % 60,
                  p.demand(),
                  p.utilization()));
      for (int k = 0; k < traffic.size(); k++) {
        row.append(
            String.format(
                Locale.ROOT, " %.0f %% | %.0f %% |", 100 * p.shed()[k], 100 * p.success()[k]));
      }
      out.println(row);
    }
    if (plot != null) {
      XYChart c =
          Charts.chart("Worker shedder through a " + overload + "× incident", "minute", "fraction");
      double[] t = new double[run.size()];
      double[] u = new double[run.size()];
      for (int i = 0; i < run.size(); i++) {
        t[i] = run.get(i).second() / 60.0;
        u[i] = run.get(i).utilization();
      }
      c.addSeries("utilization", t, u).setMarker(SeriesMarkers.NONE);
      for (int k = 0; k < traffic.size(); k++) {
        double[] shed = new double[run.size()];
        double[] served = new double[run.size()];
        for (int i = 0; i < run.size(); i++) {
          shed[i] = run.get(i).shed()[k];
          served[i] = run.get(i).success()[k];
        }
        String name = traffic.get(k).name();
        if (traffic.get(k).rank() > 0) {
          c.addSeries(name + " shed", t, shed).setMarker(SeriesMarkers.NONE);
        }
        XYSeries s = c.addSeries(name + " served", t, served);
        s.setMarker(SeriesMarkers.NONE);
        s.setLineStyle(org.knowm.xchart.style.lines.SeriesLines.DASH_DASH);
      }
      c.getStyler().setYAxisMax(1.05);
      c.getStyler().setYAxisMin(0.0);
      Charts.save(c, plot);
      out.println("wrote " + plot);
    }
    out.flush();
    return 0;
  }
}
