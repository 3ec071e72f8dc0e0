package dev.sluice.cli;

import dev.sluice.Periods;
import java.io.IOException;
import java.io.PrintWriter;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.markers.SeriesMarkers;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.TypeConversionException;

/**
 * {@code sluice thresholds}: reads access logs and, for a range of candidate limits per period,
 * prints the share of users and of user-periods each would affect; then suggests the smallest limit
 * that affects at most {@code 100 − users} % of users and {@code 100 − user-periods} % of
 * user-periods. A user is affected when its peak count in any period is over the limit; a
 * user-period is affected when its count is.
 */
@Command(
    name = "thresholds",
    mixinStandardHelpOptions = true,
    description = "Suggest a limit per period from access logs (CLF, Combined, JSON lines; gzip).")
final class ThresholdsCommand implements Callable<Integer> {

  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @Option(
      names = "--period",
      required = true,
      converter = PeriodConverter.class,
      description = "The limit's period, as in the rules file: 10s, 5m, 1h, 1d.")
  Duration period;

  @Option(
      names = "--users",
      defaultValue = "99.9",
      description = "Percentile of users the limit must leave alone (default ${DEFAULT-VALUE}).")
  double users;

  @Option(
      names = "--user-periods",
      defaultValue = "99.99",
      description = "Percentile of user-periods to leave alone (default ${DEFAULT-VALUE}).")
  double userPeriods;

  @Option(names = "--plot", description = "Draw the distribution of peak usage to this PNG.")
  Path plot;

  @Option(
      names = "--format",
      defaultValue = "auto",
      description = "auto, clf or json (auto: a line starting with '{' is JSON).")
  AccessLog.Format format;

  @Option(
      names = "--key",
      defaultValue = "auto",
      description = "auto (the user when logged in, else the IP), user or ip.")
  AccessLog.Key key;

  @Option(names = "--json-time", defaultValue = "time", description = "JSON field of the time.")
  String jsonTime;

  @Option(names = "--json-user", defaultValue = "user", description = "JSON field of the user.")
  String jsonUser;

  @Option(names = "--json-ip", defaultValue = "ip", description = "JSON field of the address.")
  String jsonIp;

  @Option(names = "--top", defaultValue = "5", description = "Clients with the highest peaks.")
  int top;

  @Parameters(arity = "1..*", paramLabel = "LOG", description = "Access logs, plain or gzip.")
  List<Path> logs;

  /** Reads a period as the rules file does. */
  static final class PeriodConverter implements ITypeConverter<Duration> {
    @Override
    public Duration convert(String value) {
      return Periods.parse(value)
          .orElseThrow(
              () ->
                  new TypeConversionException(
                      "not a period: '" + value + "' (use 500ms, 10s, 5m, 1h or 1d)"));
    }
  }

  @Override
  public Integer call() throws IOException {
    checkPercent("--users", users);
    checkPercent("--user-periods", userPeriods);
    if (top < 0) {
      throw new Sluice.UsageError("--top: must not be negative");
    }
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    AccessLog log =
        new AccessLog(format, key, new AccessLog.JsonFields(jsonTime, jsonUser, jsonIp));
    List<Path> files = inWrittenOrder(log, logs);
    long totalBytes = 0;
    for (Path f : files) {
      totalBytes += Files.size(f);
    }
    Usage usage = new Usage(period.toMillis());
    Progress progress = new Progress(err, totalBytes, Progress.onTerminal());
    long before = 0;
    try {
      for (Path f : files) {
        long base = before;
        log.read(
            f,
            usage::request,
            n ->
                progress.update(
                    base + n,
                    rate(log.textBytes, progress.seconds()) + " of text  " + f.getFileName()));
        before += Files.size(f);
      }
      usage.finish();
    } catch (OutOfMemoryError e) {
      throw new IllegalStateException(
          "out of memory after "
              + usage.clients()
              + " clients (about 250 bytes each); give Java more heap: java -Xmx4g -jar ...");
    }
    double secs = progress.seconds();
    progress.finish(rate(log.textBytes, secs) + " of text");
    report(out, log, usage, files.size(), totalBytes, secs);
    return 0;
  }

  private static String rate(long bytes, double secs) {
    return String.format("%.0f MB/s", bytes / secs / 1e6);
  }

  private static void checkPercent(String name, double v) {
    if (!(v > 0 && v <= 100)) {
      throw new Sluice.UsageError(name + ": must be a percentile above 0 and at most 100: " + v);
    }
  }

  /** Files sorted by the time of their first line (rotated logs are often named newest first). */
  private static List<Path> inWrittenOrder(AccessLog log, List<Path> files) throws IOException {
    List<Map.Entry<Path, Long>> timed = new ArrayList<>();
    for (Path f : files) {
      if (!Files.isRegularFile(f)) {
        throw new IOException(f + (Files.exists(f) ? ": not a file" : ": no such file"));
      }
      if (!Files.isReadable(f)) {
        throw new IOException(f + ": cannot read (permission denied)");
      }
      OptionalLong first = log.firstTime(f);
      timed.add(Map.entry(f, first.orElse(Long.MAX_VALUE)));
    }
    timed.sort(Map.Entry.comparingByValue());
    return timed.stream().map(Map.Entry::getKey).toList();
  }

  private void report(
      PrintWriter out, AccessLog log, Usage usage, int files, long bytes, double secs) {
    String per = Periods.format(period);
    out.printf(
        "read %d file%s, %,d lines, %,.1f MB of text (%,.1f MB on disk) in %.1f s (%.0f MB/s of"
            + " text)%n",
        files,
        files == 1 ? "" : "s",
        log.lines,
        log.textBytes / 1e6,
        bytes / 1e6,
        secs,
        log.textBytes / secs / 1e6);
    out.printf(
        "malformed lines: %,d%s; out of order (over %d periods late): %,d; without a %s: %,d%n",
        log.malformed,
        log.firstMalformed == null ? "" : " (first: " + log.firstMalformed + ")",
        Usage.OPEN,
        usage.outOfOrder,
        key == AccessLog.Key.AUTO ? "client" : key.name().toLowerCase(java.util.Locale.ROOT),
        log.withoutKey);
    Usage.Frequencies peaks = usage.peaks();
    Usage.Frequencies ups = usage.userPeriods();
    if (peaks.total() == 0) {
      throw new IllegalStateException("no requests found in the logs");
    }
    out.printf("clients: %,d; user-periods (%s): %,d%n", usage.clients(), per, ups.total());
    out.printf(
        "peak requests per client per %s: p50 %d, p90 %d, p99 %d, p99.9 %d, p99.99 %d, max %d%n",
        per,
        peaks.percentile(50),
        peaks.percentile(90),
        peaks.percentile(99),
        peaks.percentile(99.9),
        peaks.percentile(99.99),
        peaks.max());
    if (top > 0) {
      out.println("highest peaks:");
      for (Map.Entry<String, Integer> e : usage.top(top)) {
        out.printf("  %,10d  %s%n", e.getValue(), e.getKey());
      }
    }
    long suggested = suggest(peaks, ups);
    out.println();
    out.printf("%10s  %22s  %22s%n", "limit", "users affected", "user-periods affected");
    for (long limit : candidates(peaks, suggested)) {
      out.printf(
          "%10d  %,12d %9s  %,12d %9s%s%n",
          limit,
          peaks.above(limit),
          percent(peaks.above(limit), peaks.total()),
          ups.above(limit),
          percent(ups.above(limit), ups.total()),
          limit == suggested ? "  <- suggested" : "");
    }
    out.println();
    out.printf(
        "suggested limit: %d per %s (affects %s of users, %s of user-periods)%n",
        suggested,
        per,
        percent(peaks.above(suggested), peaks.total()),
        percent(ups.above(suggested), ups.total()));
    if (plot != null) {
      try {
        plot(peaks, suggested, per);
        out.println("plot: " + plot);
      } catch (IOException e) {
        throw new IllegalStateException(plot + ": cannot write the plot (" + e.getMessage() + ")");
      }
    }
  }

  /** The smallest limit (at least 1) that meets both targets. */
  long suggest(Usage.Frequencies peaks, Usage.Frequencies ups) {
    TreeSet<Long> limits = new TreeSet<>(peaks.values().keySet());
    limits.add(1L);
    for (long limit : limits) {
      if (limit >= 1
          && within(peaks.above(limit), peaks.total(), 100 - users)
          && within(ups.above(limit), ups.total(), 100 - userPeriods)) {
        return limit;
      }
    }
    return Math.max(1, peaks.max());
  }

  private static boolean within(long affected, long total, double allowedPercent) {
    return affected * 100.0 <= allowedPercent * total + 1e-6;
  }

  /**
   * A ladder of round limits up to the highest peak, the peaks' percentiles, and the suggestion.
   */
  private static List<Long> candidates(Usage.Frequencies peaks, long suggested) {
    TreeSet<Long> c = new TreeSet<>();
    long max = Math.max(1, peaks.max());
    for (long step = 1; step <= max; step *= 10) {
      for (long m : new long[] {1, 2, 5}) {
        if (step * m <= max) {
          c.add(step * m);
        }
      }
    }
    for (double p : new double[] {50, 90, 99, 99.9, 99.99}) {
      c.add(Math.max(1, peaks.percentile(p)));
    }
    c.add(max);
    c.add(suggested);
    return new ArrayList<>(c);
  }

  /** A share as a percentage with at most four decimals: {@code 0.1%}, {@code 9.0992%}. */
  static String percent(long part, long total) {
    if (total == 0) {
      return "0%";
    }
    BigDecimal p =
        BigDecimal.valueOf(part)
            .multiply(BigDecimal.valueOf(100))
            .divide(BigDecimal.valueOf(total), 4, RoundingMode.HALF_UP)
            .stripTrailingZeros();
    return p.toPlainString() + "%";
  }

  private void plot(Usage.Frequencies peaks, long suggested, String per) throws IOException {
    XYChart chart =
        Charts.chart(
            "Peak requests per client per " + per,
            "peak requests in one " + per + " (log)",
            "clients (log)");
    chart.getStyler().setXAxisLogarithmic(true);
    chart.getStyler().setYAxisLogarithmic(true);
    List<Double> xs = new ArrayList<>();
    List<Double> ys = new ArrayList<>();
    long most = 1;
    for (Map.Entry<Long, Long> e : peaks.values().entrySet()) {
      if (e.getKey() > 0) {
        xs.add((double) e.getKey());
        ys.add((double) e.getValue());
        most = Math.max(most, e.getValue());
      }
    }
    XYSeries s = chart.addSeries("clients with that peak", xs, ys);
    s.setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Scatter);
    s.setMarker(SeriesMarkers.CIRCLE);
    XYSeries line =
        chart.addSeries(
            "suggested limit: " + suggested,
            List.of((double) suggested, (double) suggested),
            List.of(1.0, (double) most));
    line.setMarker(SeriesMarkers.NONE);
    line.setLineColor(java.awt.Color.RED);
    Charts.save(chart, plot);
  }
}
