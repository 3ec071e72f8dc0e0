package dev.sluice.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code sluice plot}: draws several {@code .hgrm} percentile files (as {@code sluice bench --out}
 * writes them, in ms) on one latency-by-percentile chart, to compare runs.
 */
@Command(
    name = "plot",
    mixinStandardHelpOptions = true,
    description = "Draw .hgrm percentile files (from bench --out) on one chart.")
final class PlotCommand implements Callable<Integer> {

  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @Option(names = "--out", required = true, description = "The PNG to write.")
  Path out;

  @Option(names = "--title", defaultValue = "Latency by percentile", description = "Its title.")
  String title;

  @Parameters(arity = "1..*", paramLabel = "LABEL=FILE", description = "A .hgrm file and its name.")
  List<String> files;

  @Override
  public Integer call() throws IOException {
    Map<String, List<double[]>> series = new LinkedHashMap<>();
    for (String f : files) {
      int eq = f.indexOf('=');
      if (eq <= 0) {
        throw new Sluice.UsageError("expected LABEL=FILE, got '" + f + "'");
      }
      series.put(f.substring(0, eq), read(Path.of(f.substring(eq + 1))));
    }
    Charts.save(BenchCommand.latencyChart(title, series), out);
    spec.commandLine().getOut().println("wrote " + out);
    return 0;
  }

  /** The (percentile %, value) rows of an HdrHistogram percentile distribution file. */
  static List<double[]> read(Path file) throws IOException {
    if (!Files.isReadable(file)) {
      throw new IOException(file + ": no such file, or not readable");
    }
    List<double[]> points = new ArrayList<>();
    for (String line : Files.readAllLines(file)) {
      String[] cols = line.trim().split("\\s+", -1);
      // Value, Percentile, TotalCount and 1/(1-Percentile), which the last row leaves out.
      if ((cols.length == 4 || cols.length == 3) && !line.startsWith("#")) {
        try {
          points.add(new double[] {Double.parseDouble(cols[1]) * 100, Double.parseDouble(cols[0])});
        } catch (NumberFormatException e) {
          // the header line
        }
      }
    }
    if (points.isEmpty()) {
      throw new IOException(file + ": not an HdrHistogram percentile file (.hgrm)");
    }
    return points;
  }
}
