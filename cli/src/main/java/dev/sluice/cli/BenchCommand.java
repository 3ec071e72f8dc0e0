package dev.sluice.cli;

import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.style.markers.SeriesMarkers;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code sluice bench}: loads one URL at a fixed rate (open loop, corrected for coordinated
 * omission), then prints latency percentiles, the count of each status and the achieved rate.
 *
 * <p>It only loads loopback addresses unless the host is named again with {@code --allow-host}, and
 * every run is bounded: at most an hour, 100,000 requests a second and 10 million requests.
 */
@Command(
    name = "bench",
    mixinStandardHelpOptions = true,
    description = "Load an HTTP API at a fixed rate and report what it felt like.")
final class BenchCommand implements Callable<Integer> {

  static final Duration MAX_DURATION = Duration.ofHours(1);
  static final double MAX_RATE = 100_000;
  static final long MAX_REQUESTS = 10_000_000;

  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @Option(
      names = "--url",
      required = true,
      description = "The URL to GET; repeat it to spread requests over several instances in turn.")
  List<URI> urls;

  @Option(names = "--rate", required = true, description = "Requests per second.")
  double rate;

  @Option(
      names = "--duration",
      required = true,
      converter = ThresholdsCommand.PeriodConverter.class,
      description = "How long to send: 10s, 1m (at most 1h).")
  Duration duration;

  @Option(
      names = "--connections",
      defaultValue = "16",
      description = "Requests in flight at most (default ${DEFAULT-VALUE}).")
  int connections;

  @Option(names = "--header", description = "A header for every request, as Name:Value.")
  List<String> headers = new ArrayList<>();

  @Option(
      names = "--keys",
      defaultValue = "0",
      description = "Spread requests over N values of --key-header, so a limiter sees N clients.")
  int keys;

  @Option(
      names = "--key-header",
      defaultValue = "X-Api-Key",
      description = "The header --keys varies (default ${DEFAULT-VALUE}).")
  String keyHeader;

  @Option(
      names = "--timeout",
      defaultValue = "10s",
      converter = ThresholdsCommand.PeriodConverter.class,
      description = "Per request (default ${DEFAULT-VALUE}).")
  Duration timeout;

  @Option(
      names = "--warmup",
      defaultValue = "0s",
      converter = WarmupConverter.class,
      description =
          "Send at the rate this long first, unmeasured, with keys named warmup-N (default none).")
  Duration warmup;

  /** A period, or 0s for none. */
  static final class WarmupConverter implements picocli.CommandLine.ITypeConverter<Duration> {
    @Override
    public Duration convert(String value) {
      return value.equals("0") || value.equals("0s")
          ? Duration.ZERO
          : new ThresholdsCommand.PeriodConverter().convert(value);
    }
  }

  @Option(names = "--out", description = "Write latency.hgrm, latency.png and status.png here.")
  Path out;

  @Option(
      names = "--allow-host",
      description = "A host that is not loopback but is yours to load (repeat for several).")
  List<String> allowHosts = new ArrayList<>();

  @Override
  public Integer call() throws IOException, InterruptedException {
    LoadGenerator.Plan plan = plan();
    PrintWriter w = spec.commandLine().getOut();
    w.printf(
        "bench GET %s at %s/s for %s over %d connections%s%n",
        urls.size() == 1 ? urls.get(0) : urls.get(0) + " and " + (urls.size() - 1) + " more",
        number(rate),
        dev.sluice.Periods.format(duration),
        connections,
        keys > 0 ? ", " + keys + " keys in " + keyHeader : "");
    w.flush();
    Progress progress =
        new Progress(spec.commandLine().getErr(), duration.toMillis(), Progress.onTerminal());
    LoadGenerator.Result r = LoadGenerator.run(plan, ms -> progress.update(ms, (ms / 1000) + " s"));
    progress.finish(duration.toSeconds() + " s");
    print(w, r);
    if (out != null) {
      write(r);
      w.println("wrote " + out.resolve("latency.hgrm") + ", latency.png, status.png");
    }
    return r.answered() == 0 ? 1 : 0;
  }

  private LoadGenerator.Plan plan() {
    for (URI url : urls) {
      if (url.getScheme() == null
          || !(url.getScheme().equals("http") || url.getScheme().equals("https"))
          || url.getHost() == null) {
        throw new Sluice.UsageError("--url: not an http(s) URL with a host: " + url);
      }
      checkHost(url.getHost());
    }
    if (!(rate > 0 && rate <= MAX_RATE)) {
      throw new Sluice.UsageError("--rate: must be above 0 and at most 100000: " + number(rate));
    }
    if (duration.plus(warmup).compareTo(MAX_DURATION) > 0) {
      throw new Sluice.UsageError("--duration: at most 1h, with --warmup");
    }
    if (connections < 1 || connections > 1024) {
      throw new Sluice.UsageError("--connections: must be 1 to 1024: " + connections);
    }
    if (keys < 0) {
      throw new Sluice.UsageError("--keys: must not be negative");
    }
    if (keys > 0) {
      checkHeader(keyHeader, "client-0");
    }
    Map<String, String> h = new LinkedHashMap<>();
    for (String header : headers) {
      int colon = header.indexOf(':');
      if (colon <= 0) {
        throw new Sluice.UsageError("--header: expected Name:Value, got '" + header + "'");
      }
      String name = header.substring(0, colon).trim();
      String value = header.substring(colon + 1).trim();
      checkHeader(name, value);
      h.put(name, value);
    }
    LoadGenerator.Plan plan =
        new LoadGenerator.Plan(
            List.copyOf(urls), rate, duration, connections, h, keyHeader, keys, timeout, warmup);
    if (plan.requests() + plan.requests(warmup) > MAX_REQUESTS) {
      throw new Sluice.UsageError("--rate times --duration: at most 10000000 requests in one run");
    }
    if (plan.requests() < 1) {
      throw new Sluice.UsageError("--rate times --duration: less than one request");
    }
    return plan;
  }

  private static final java.util.regex.Pattern TOKEN =
      java.util.regex.Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]+");
  private static final java.util.Set<String> OWN =
      java.util.Set.of("host", "content-length", "transfer-encoding", "connection", "upgrade");

  /**
   * A header name that is an HTTP token, a value without line breaks, not one bench sets itself.
   */
  private static void checkHeader(String name, String value) {
    if (!TOKEN.matcher(name).matches()) {
      throw new Sluice.UsageError("--header: not a header name: '" + name + "'");
    }
    if (OWN.contains(name.toLowerCase(Locale.ROOT))) {
      throw new Sluice.UsageError("--header: " + name + " is set by sluice bench itself");
    }
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c == '\r' || c == '\n' || c == 0 || c > 0xff) {
        throw new Sluice.UsageError(
            "--header: the value of " + name + " has a character HTTP does not allow");
      }
    }
  }

  private void checkHost(String host) {
    for (String allowed : allowHosts) {
      if (allowed.equalsIgnoreCase(host)) {
        return;
      }
    }
    InetAddress[] addresses;
    try {
      addresses = InetAddress.getAllByName(host);
    } catch (UnknownHostException e) {
      throw new Sluice.UsageError("--url: unknown host " + host);
    }
    for (InetAddress a : addresses) {
      if (!a.isLoopbackAddress()) {
        throw new Sluice.UsageError(
            "--url: "
                + host
                + " is not a loopback address; load only hosts you own, and name it with"
                + " --allow-host "
                + host);
      }
    }
  }

  private static String number(double v) {
    return v == Math.rint(v) ? String.valueOf((long) v) : String.valueOf(v);
  }

  static void print(PrintWriter w, LoadGenerator.Result r) {
    w.printf(
        "requests: %,d planned, %,d sent, %,d answered, %,d errors%s%n",
        r.planned(),
        r.sent(),
        r.answered(),
        r.errors(),
        r.unfinished() > 0 ? ", " + r.unfinished() + " unfinished" : "");
    if (r.firstError() != null) {
      w.println("first error: " + r.firstError());
    }
    w.printf(Locale.ROOT, "achieved rate: %.1f/s over %.2f s%n", r.achievedRate(), r.seconds());
    StringBuilder s = new StringBuilder("status:");
    r.statuses().forEach((code, count) -> s.append(String.format("  %d: %,d", code, count)));
    w.println(s);
    long ok =
        r.statuses().entrySet().stream()
            .filter(e -> e.getKey() / 100 == 2)
            .mapToLong(Map.Entry::getValue)
            .sum();
    if (ok > 0) {
      // A limiter that decided writes its headers; a 2xx without them was not limited: no rule
      // applied, or the limiter failed open (its store did not answer in time).
      w.printf(
          Locale.ROOT,
          "2xx without rate-limit headers (no rule, or failed open): %,d of %,d (%.2f %%)%n",
          r.unlimited(),
          ok,
          100.0 * r.unlimited() / ok);
    }
    for (int k = 1; k <= 2; k++) {
      for (int sec = 0; sec < r.perSecond().length; sec++) {
        if (r.perSecond()[sec][k] > 0) {
          w.printf("first %s in second %d of the run%n", LoadGenerator.KINDS.get(k), sec + 1);
          break;
        }
      }
    }
    Histogram h = r.latencyMicros();
    if (h.getTotalCount() > 0) {
      w.printf(
          Locale.ROOT,
          "latency (ms, from when each request was due): p50 %.3f  p90 %.3f  p95 %.3f  p99 %.3f"
              + "  p99.9 %.3f  max %.3f%n",
          h.getValueAtPercentile(50) / 1000.0,
          h.getValueAtPercentile(90) / 1000.0,
          h.getValueAtPercentile(95) / 1000.0,
          h.getValueAtPercentile(99) / 1000.0,
          h.getValueAtPercentile(99.9) / 1000.0,
          h.getMaxValue() / 1000.0);
    }
  }

  private void write(LoadGenerator.Result r) throws IOException {
    Files.createDirectories(out);
    try (PrintStream p = new PrintStream(Files.newOutputStream(out.resolve("latency.hgrm")))) {
      r.latencyMicros().outputPercentileDistribution(p, 1000.0);
    }
    Charts.save(latencyChart(r.latencyMicros(), urls.get(0).getPath()), out.resolve("latency.png"));
    Charts.save(statusChart(r), out.resolve("status.png"));
  }

  /**
   * Latency by percentile, the usual HdrHistogram picture: the x axis is log10(1 / (1 − p)), so 90
   * %, 99 % and 99.9 % are evenly spaced and the tail is readable.
   */
  static XYChart latencyChart(Histogram h, String title) {
    List<double[]> points = new ArrayList<>();
    for (HistogramIterationValue v : h.percentiles(5)) {
      points.add(new double[] {v.getPercentileLevelIteratedTo(), v.getValueIteratedTo() / 1000.0});
    }
    return latencyChart("Latency by percentile: " + title, Map.of("latency", points));
  }

  /**
   * One line per series of (percentile in %, latency in ms) points, on the axis of {@link
   * #latencyChart(Histogram, String)}.
   */
  static XYChart latencyChart(String title, Map<String, List<double[]>> series) {
    XYChart c = Charts.chart(title, "percentile", "latency (ms)");
    c.setCustomXAxisTickLabelsFormatter(BenchCommand::percentileLabel);
    series.forEach(
        (name, points) -> {
          List<Double> xs = new ArrayList<>();
          List<Double> ys = new ArrayList<>();
          for (double[] p : points) {
            if (p[0] >= 100) {
              break;
            }
            xs.add(Math.log10(1 / (1 - p[0] / 100)));
            ys.add(p[1]);
          }
          if (xs.isEmpty()) {
            xs.add(0.0);
            ys.add(0.0);
          }
          c.addSeries(name, xs, ys).setMarker(SeriesMarkers.NONE);
        });
    return c;
  }

  /** 0 → "0%", 1 → "90%", 2 → "99%", 3 → "99.9%"; ticks between whole numbers are left blank. */
  static String percentileLabel(double x) {
    if (Math.abs(x - Math.rint(x)) > 1e-6) {
      return "";
    }
    double p = 100 * (1 - Math.pow(10, -Math.rint(x)));
    return new java.math.BigDecimal(p)
            .setScale(6, java.math.RoundingMode.HALF_UP)
            .stripTrailingZeros()
            .toPlainString()
        + "%";
  }

  /** Answers per second by status class: when the 429s start, and how many. */
  static XYChart statusChart(LoadGenerator.Result r) {
    XYChart c = Charts.chart("Status over time", "second of the run", "answers per second");
    long[][] t = r.perSecond();
    for (int k = 0; k < LoadGenerator.KINDS.size(); k++) {
      List<Double> xs = new ArrayList<>();
      List<Double> ys = new ArrayList<>();
      long total = 0;
      for (int sec = 0; sec < t.length; sec++) {
        xs.add((double) sec + 1);
        ys.add((double) t[sec][k]);
        total += t[sec][k];
      }
      if (total > 0) {
        c.addSeries(LoadGenerator.KINDS.get(k), xs, ys).setMarker(SeriesMarkers.CIRCLE);
      }
    }
    if (c.getSeriesMap().isEmpty()) {
      c.addSeries("none", List.of(1.0), List.of(0.0));
    }
    return c;
  }
}
