package dev.sluice.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.testkit.MemcachedServer;
import dev.sluice.testkit.TcpProxy;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Assumptions;

/**
 * Demo JVMs on one memcached, each reaching it through one {@link TcpProxy} (refused to cut them
 * all off), each with the same rules file; instance {@code i}'s output in {@code demo-i.log}. Close
 * it when done.
 */
final class ProxiedFleet implements AutoCloseable {

  /** How far memcached's clock may be taken to be from this host's, with room to spare. */
  private static final long CLOCK_SLACK = 10_000;

  final MemcachedServer memcached;
  final TcpProxy proxy;
  final List<DemoProcess> instances = new ArrayList<>();
  final List<Path> logs = new ArrayList<>();

  /** When the fleet began, on this host's clock. */
  private final long began = System.currentTimeMillis();

  private final ReportClient reports = new ReportClient();

  /**
   * Starts memcached, the proxy and {@code size} instances with {@code rulesYaml} (written to
   * {@code dir}) and {@code args} after the store and the rules.
   */
  ProxiedFleet(Path dir, String rulesYaml, int size, String... args) throws Exception {
    memcached = MemcachedServer.start();
    try {
      proxy = TcpProxy.to(memcached.port());
    } catch (Exception | AssertionError e) {
      memcached.close();
      throw e;
    }
    try {
      Path rules = dir.resolve("rules.yaml");
      Files.writeString(rules, rulesYaml);
      for (int i = 0; i < size; i++) {
        Path log = dir.resolve("demo-" + i + ".log");
        logs.add(log);
        List<String> cmd =
            new ArrayList<>(
                List.of("--memcached", "127.0.0.1:" + proxy.port(), "--rules", rules.toString()));
        cmd.addAll(List.of(args));
        instances.add(DemoProcess.start(log, cmd.toArray(String[]::new)));
      }
    } catch (Exception | AssertionError e) {
      close();
      throw e;
    }
  }

  /** One request for {@code key} to instance {@code i}. */
  HttpResponse<String> get(int i, String key) {
    return reports.get(instances.get(i).port, key);
  }

  /** Waits until every instance describes fresh keys with {@code limit}. */
  void awaitLimit(String limit) {
    for (int i = 0; i < instances.size(); i++) {
      int instance = i;
      assertTrue(
          MemcachedServer.await(
              Duration.ofSeconds(30),
              () -> ReportClient.limit(get(instance, "probe-" + UUID.randomUUID())).equals(limit)),
          "instance on port " + instances.get(i).port + " never decided with limit " + limit);
    }
  }

  /**
   * Skips a run that may have crossed an hour's boundary. The instances count hours on memcached's
   * clock, a second or two from this host's, so the fleet's span is widened by {@link #CLOCK_SLACK}
   * on each side.
   */
  void assumeOneHour() {
    long h = Duration.ofHours(1).toMillis();
    Assumptions.assumeTrue(
        (began - CLOCK_SLACK) / h == (System.currentTimeMillis() + CLOCK_SLACK) / h,
        "the test may have crossed an hour's boundary on memcached's clock");
  }

  @Override
  public void close() throws InterruptedException {
    for (DemoProcess d : instances) {
      d.close();
    }
    proxy.close();
    memcached.close();
  }
}
