package dev.sluice.it;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.sluice.it.FleetSchedule.Kind;
import dev.sluice.it.FleetSchedule.Shape;
import dev.sluice.testkit.Memcached;
import dev.sluice.testkit.MemcachedServer;
import dev.sluice.testkit.TcpProxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.function.LongFunction;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The fleet harness: three demo JVMs, each under libfaketime at its own clock offset, over real
 * HTTP on one real memcached (2 MB, so it can be made to evict) reached through a proxy that can
 * cut it off. Generated schedules (seeded; {@code -Dsluice.fleet.seed=N} replays one) interleave
 * several clients' requests across instances with idle gaps, and inject faults: instances killed
 * and started again, memcached restarted, made to evict, cut off (flaps) and frozen (stalls; {@code
 * -Dsluice.fleet.faults=STALL,FLAP} keeps only some kinds). Every outcome is judged by an exact
 * model ({@link FleetModels}): the per-window count of a fixed window, the estimate of a sliding
 * window, GCRA for a token bucket, the set in flight for a concurrency limit.
 *
 * <p>Each schedule prints its seed, the instances' offsets and the whole schedule; a failure
 * repeats them with the requests at fault. The cases share one fleet and one memcached, so a fault
 * one case injects (memcached restarted) is what the next one starts from. {@code -Pfleet-long}
 * runs more and longer schedules ({@code sluice.fleet.schedules}, {@code sluice.fleet.scale}).
 */
@Memcached(megabytes = 2)
class FleetHarnessIT {

  /** Fixed and sliding windows of 2 s, a token bucket, a concurrency limit, a local share. */
  static final String RULES =
      """
      defaults:
        key: [header:X-Client]
        onStoreFailure: allow
      rules:
        - id: fixed
          match: { methods: [GET], path: /api/v1/report }
          algorithm: fixed-window
          tiers: [ { limit: 5, period: 2s } ]
        - id: sliding
          match: { methods: [GET], path: /api/v1/search }
          algorithm: sliding-window
          tiers: [ { limit: 5, period: 2s } ]
        - id: bucket
          match: { methods: [POST], path: "/api/v1/lead/{id}" }
          algorithm: token-bucket
          tiers: [ { limit: 4, period: 1s, burst: 3 } ]
        - id: in-flight
          match: { methods: [GET], path: /api/v1/slow }
          concurrency: 2
        - id: local
          match: { methods: [GET], path: "/v1/organizations/{orgId}/product/{id}" }
          algorithm: fixed-window
          tiers: [ { limit: 6, period: 2s } ]
          onStoreFailure: local
          instances: 3
      """;

  static final int INSTANCES = 3;
  static final long PERIOD = 2_000;

  private static final long SEED = Long.getLong("sluice.fleet.seed", new Random().nextLong());
  private static final int SCHEDULES = Integer.getInteger("sluice.fleet.schedules", 1);
  private static final int SCALE = Integer.getInteger("sluice.fleet.scale", 1);

  private static MemcachedServer memcached;
  private static TcpProxy proxy;
  private static Fleet fleet;
  private static int[] offsets;

  @BeforeAll
  static void start(MemcachedServer started) throws Exception {
    assumeTrue(
        DemoProcess.LIBFAKETIME != null, "libfaketime is not installed (apt-get install faketime)");
    memcached = started;
    proxy = TcpProxy.to(memcached.port());
    Random r = new Random(SEED);
    offsets = new int[INSTANCES];
    for (int i = 1; i < INSTANCES; i++) {
      offsets[i] = r.nextInt(181) - 90;
    }
    System.out.println(describe());
    Path dir = Files.createTempDirectory("sluice-fleet-harness");
    fleet = new Fleet(dir, RULES, "127.0.0.1:" + proxy.port(), offsets);
  }

  @AfterAll
  static void stop() throws Exception {
    if (fleet != null) {
      fleet.close();
    }
    if (proxy != null) {
      proxy.close();
    }
  }

  private static String describe() {
    return String.format(
        Locale.ROOT,
        "fleet harness: -Dsluice.fleet.seed=%d, %d instances at clock offsets %s s,"
            + " %d schedule(s) of scale %d",
        SEED,
        INSTANCES,
        Arrays.toString(offsets),
        SCHEDULES,
        SCALE);
  }

  /** The faults every store-backed case goes through. */
  private static final List<Kind> ALL_FAULTS =
      List.of(Kind.KILL_INSTANCE, Kind.RESTART_MEMCACHED, Kind.EVICT, Kind.FLAP, Kind.STALL);

  private interface Judge {
    FleetModels.Verdict judge(FleetRun run);
  }

  /**
   * Runs {@code SCHEDULES} schedules of {@code shape} for the rule at {@code path}, judges each,
   * prints and reports the figures, and fails with everything needed to reproduce a violation.
   */
  private static FleetModels.Verdict run(
      String name, int salt, Shape shape, String method, LongFunction<String> path, Judge judge)
      throws Exception {
    FleetModels.Verdict total = new FleetModels.Verdict();
    List<String> failures = new ArrayList<>();
    for (int k = 0; k < SCHEDULES; k++) {
      long seed = SEED + 1_000L * salt + k;
      Shape scaled =
          new Shape(
              shape.millis() * SCALE,
              shape.clients(),
              shape.lanes(),
              shape.pinned(),
              shape.holdMillis(),
              shape.faultKinds(),
              shape.faults() * SCALE);
      String only = System.getProperty("sluice.fleet.faults");
      if (only != null && !scaled.faultKinds().isEmpty()) {
        // -Dsluice.fleet.faults=RESTART_MEMCACHED,FLAP: only these kinds of fault.
        scaled =
            new Shape(
                scaled.millis(),
                scaled.clients(),
                scaled.lanes(),
                scaled.pinned(),
                scaled.holdMillis(),
                Arrays.stream(only.split(",")).map(String::trim).map(Kind::valueOf).toList(),
                scaled.faults());
      }
      FleetSchedule schedule = FleetSchedule.generate(seed, INSTANCES, name, scaled);
      System.out.println("fleet harness, " + name + ": " + describe() + "\n" + schedule);
      FleetRun run = new FleetRun(fleet, memcached, proxy).run(schedule, method, path);
      FleetModels.Verdict v = judge.judge(run);
      v.violations.addAll(run.problems);
      Path log = writeLog(name, seed, schedule, run, v);
      total.add(v);
      Report.line(
          String.format(
              Locale.ROOT,
              "fleet harness, %s, seed %d, offsets %s s, memcached's clock %s, faults %s: %s",
              name,
              seed,
              Arrays.toString(offsets),
              run.phases,
              run.faults,
              v));
      if (!v.violations.isEmpty()) {
        failures.add(
            describe()
                + "\n"
                + name
                + ", schedule "
                + schedule
                + "faults as they happened: "
                + run.faults
                + "\nmemcached's clock against the host's: "
                + run.phases
                + "\nthe instances' measurements of it:\n"
                + clockLines()
                + "every request: "
                + log
                + "\n"
                + v
                + "\n  "
                + String.join("\n  ", v.violations.subList(0, Math.min(20, v.violations.size()))));
      }
    }
    assertTrue(failures.isEmpty(), String.join("\n\n", failures));
    return total;
  }

  /**
   * What each instance logged of memcached's clock (each offset it measured, each move it saw),
   * each line timed by that instance's own clock (the host's plus its offset): which phase each
   * decided on, for reading a failure.
   */
  private static String clockLines() {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < fleet.size(); i++) {
      List<String> lines;
      try {
        lines =
            Files.readAllLines(fleet.log(i)).stream()
                .filter(l -> l.contains("MemcachedClock"))
                .toList();
      } catch (java.io.IOException | java.io.UncheckedIOException e) {
        lines = List.of("(its log could not be read: " + e + ")");
      }
      for (String l : lines.subList(Math.max(0, lines.size() - 20), lines.size())) {
        b.append("  i").append(i).append(" (").append(fleet.offset(i)).append(" s) ");
        b.append(l).append('\n');
      }
    }
    return b.toString();
  }

  /** Everything about one schedule's run, for reading a failure: target/fleet-harness/. */
  private static Path writeLog(
      String name, long seed, FleetSchedule schedule, FleetRun run, FleetModels.Verdict v)
      throws java.io.IOException {
    Path dir = Path.of("target", "fleet-harness");
    Files.createDirectories(dir);
    Path log =
        dir.resolve(
            name.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "-") + "-" + seed + ".log");
    List<String> lines = new ArrayList<>();
    lines.add(describe());
    lines.add(schedule.toString());
    lines.add("faults as they happened: " + run.faults);
    lines.add("memcached's clock against the host's: " + run.phases);
    lines.add(v.toString());
    lines.addAll(v.violations);
    lines.add("requests, by client, in the order sent:");
    List.copyOf(run.sent).stream()
        .sorted(
            java.util.Comparator.comparing(FleetRun.Sent::client)
                .thenComparingLong(FleetRun.Sent::sentMillis))
        .forEach(r -> lines.add("  " + r));
    Files.write(log, lines);
    return log.toAbsolutePath();
  }

  @Test
  void aFixedWindowCountsExactlyAcrossInstancesAndFaults() throws Exception {
    run(
        "fixed window",
        1,
        new Shape(14_000, 3, 1, false, 0, ALL_FAULTS, 3),
        "GET",
        hold -> "/api/v1/report",
        r -> FleetModels.check(r, new FleetModels.FixedModel(5, PERIOD)));
  }

  @Test
  void aSlidingWindowDecidesAsItsEstimateAcrossInstancesAndFaults() throws Exception {
    run(
        "sliding window",
        2,
        new Shape(14_000, 3, 1, false, 0, ALL_FAULTS, 3),
        "GET",
        hold -> "/api/v1/search",
        r -> FleetModels.check(r, new FleetModels.SlidingModel(5, PERIOD)));
  }

  /** Each client on one instance (its home); memcached restarted and cut off under it. */
  @Test
  void aTokenBucketOnOneInstanceIsExactGcra() throws Exception {
    run(
        "token bucket, one instance per client",
        3,
        new Shape(10_000, 3, 1, true, 0, List.of(Kind.RESTART_MEMCACHED, Kind.FLAP), 2),
        "POST",
        hold -> "/api/v1/lead/1",
        r -> FleetModels.check(r, new FleetModels.GcraModel(3, 250)));
  }

  @Test
  void aConcurrencyLimitAdmitsExactlyWhileFewerAreInFlight() throws Exception {
    run(
        "concurrency",
        4,
        new Shape(8_000, 2, 3, false, 400, List.of(), 0),
        "GET",
        hold -> "/api/v1/slow?ms=" + hold,
        r -> FleetModels.checkConcurrency(r, 2));
  }

  /** A token bucket whose clients move between instances: exact GCRA across instances. */
  @Test
  void aTokenBucketAcrossInstancesIsExactGcra() throws Exception {
    run(
        "token bucket across instances",
        5,
        new Shape(10_000, 3, 1, false, 0, List.of(), 0),
        "POST",
        hold -> "/api/v1/lead/1",
        r -> FleetModels.check(r, new FleetModels.GcraModel(3, 250)));
  }

  /**
   * {@code onStoreFailure: local} through flaps that cut every instance off a store that keeps its
   * data, and stalls of that store: in any window the fleet admits at most the limit plus the local
   * shares of all instances but one ({@code 6 + 2 × 2}), the bound that holds whichever instances
   * decide locally. Each instance limits at its share, seeded from what the store last said, and
   * pushes what it counted when the store answers again; after a flap or a stall the instances come
   * back within one probe of one another, and in those milliseconds one may count through the store
   * while the others still spend their shares (the stated {@code P} term), and an instance whose
   * last answer came before the store admitted others still has its share (the {@code U} term).
   * Measured: at most 9 (the limit plus one request per instance) over 40 schedules of flaps and 20
   * of flaps and stalls. Not pushing local counts admits the limit and every share ({@code 6 + 3 ×
   * 2}).
   */
  @Test
  void localSharesHoldTheLimitThroughFlaps() throws Exception {
    run(
        "onStoreFailure local under flaps",
        6,
        new Shape(14_000, 3, 1, false, 0, List.of(Kind.FLAP, Kind.STALL), 4),
        "GET",
        hold -> "/v1/organizations/acme/product/1",
        r -> FleetModels.checkWindowBound(r, PERIOD, 6 + (INSTANCES - 1) * 2));
  }
}
