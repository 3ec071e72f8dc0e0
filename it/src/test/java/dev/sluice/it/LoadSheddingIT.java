package dev.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real demo process with 8 workers under four times its capacity from all four priority classes:
 * critical requests keep their success and a bounded p99, test traffic is shed first, and nothing
 * answers 500. The worker shedder runs with a short delay and ramp (2 s, 10 s) so the incident fits
 * a test; docs/RELIABILITY.md shows the seed's 28 s and 120 s on a simulated clock.
 */
class LoadSheddingIT {

  @TempDir Path dir;

  private final HttpClient http =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(5))
          .build();

  /** A client's requests: its class, method and path, and any header. */
  private record Kind(String name, String method, String path, String header) {}

  private static final List<Kind> KINDS =
      List.of(
          new Kind("critical", "POST", "/api/v1/lead/7?ms=200", null),
          new Kind("writes", "PUT", "/v1/organizations/o/product/1?ms=200", null),
          new Kind("reads", "GET", "/api/v1/slow?ms=200", null),
          new Kind("test", "GET", "/api/v1/slow?ms=200", "X-Test-Mode"));

  /** Clients per kind: 32 in all, four per worker, each always with one request outstanding. */
  private static final int[] CLIENTS = {2, 6, 12, 12};

  @Test
  void underFourTimesCapacityCriticalKeepsSucceedingAndTestTrafficIsShedFirst() throws Exception {
    Path rules = dir.resolve("rules.yaml");
    Files.writeString(
        rules,
        """
        loadShedding:
          classes:
            - { name: critical, priority: critical, match: { methods: [POST], path: "/api/v1/lead/{id}" } }
            - { name: test, priority: 3, match: { headers: { X-Test-Mode: "true" } } }
            - { name: writes, priority: 1, match: { methods: [POST, PUT, PATCH, DELETE] } }
            - { name: reads, priority: 2 }
          fleet: { capacity: 10, reserve: 20% }
          workers: { threads: 8, delay: 2s, ramp: 10s }
        rules: []
        """);
    DemoProcess demo =
        DemoProcess.start(dir.resolve("demo.log"), "--workers", "8", "--rules", rules.toString());
    int port = demo.port;
    ExecutorService pool = Executors.newFixedThreadPool(32);
    try {
      // The load runs until the workers have shed test traffic for 8 s (at least 15 s in all),
      // and at most 40 s: how soon the shedder engages depends on how busy the machine is.
      long begun = System.nanoTime();
      java.util.concurrent.atomic.AtomicLong end =
          new java.util.concurrent.atomic.AtomicLong(begun + TimeUnit.SECONDS.toNanos(40));
      // Per kind: [200s, 503s by the fleet, 503s by the workers, other]; latencies of successes.
      AtomicLongArray counts = new AtomicLongArray(KINDS.size() * 4);
      Map<String, List<Long>> latencies = new ConcurrentHashMap<>();
      Map<String, Long> firstWorkerShed = new ConcurrentHashMap<>();
      long start = System.nanoTime();
      List<Future<?>> clients = new ArrayList<>();
      for (int k = 0; k < KINDS.size(); k++) {
        for (int c = 0; c < CLIENTS[k]; c++) {
          int kind = k;
          clients.add(
              pool.submit(
                  () -> {
                    List<Long> mine = new ArrayList<>();
                    while (System.nanoTime() < end.get()) {
                      long t0 = System.nanoTime();
                      HttpResponse<String> r = send(port, KINDS.get(kind));
                      long took = System.nanoTime() - t0;
                      int slot;
                      if (r.statusCode() == 200) {
                        slot = 0;
                        mine.add(took);
                      } else if (r.statusCode() == 503 && r.body().contains("fleet-usage")) {
                        slot = 1;
                      } else if (r.statusCode() == 503 && r.body().contains("worker-utilization")) {
                        slot = 2;
                        if (firstWorkerShed.putIfAbsent(KINDS.get(kind).name(), t0 - start) == null
                            && KINDS.get(kind).name().equals("test")) {
                          long stop =
                              Math.max(
                                  begun + TimeUnit.SECONDS.toNanos(15),
                                  System.nanoTime() + TimeUnit.SECONDS.toNanos(8));
                          end.accumulateAndGet(stop, Math::min);
                        }
                      } else {
                        slot = 3;
                      }
                      counts.incrementAndGet(kind * 4 + slot);
                      if (r.statusCode() == 503) {
                        // A shed client backs off a little, as Retry-After asks (not the full 1 s).
                        Thread.sleep(20);
                      }
                    }
                    latencies.merge(
                        KINDS.get(kind).name(),
                        mine,
                        (a, b) -> {
                          List<Long> all = new ArrayList<>(a);
                          all.addAll(b);
                          return all;
                        });
                    return null;
                  }));
        }
      }
      java.util.concurrent.ScheduledExecutorService probe =
          Executors.newSingleThreadScheduledExecutor();
      var unused =
          probe.schedule(
              () -> {
                try {
                  Files.writeString(
                      Path.of("target", "loadshedding-threads.txt"), demo.threadDump());
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
              },
              20,
              TimeUnit.SECONDS);
      for (Future<?> f : clients) {
        f.get(90, TimeUnit.SECONDS);
      }
      probe.shutdownNow();
      Map<String, String> report = new TreeMap<>();
      for (int k = 0; k < KINDS.size(); k++) {
        report.put(
            KINDS.get(k).name(),
            "200="
                + counts.get(k * 4)
                + " fleet503="
                + counts.get(k * 4 + 1)
                + " worker503="
                + counts.get(k * 4 + 2)
                + " other="
                + counts.get(k * 4 + 3));
      }
      String summary =
          report
              + " first worker sheds (ms): "
              + millis(firstWorkerShed)
              + " after "
              + (System.nanoTime() - begun) / 1_000_000
              + " ms";
      for (int k = 0; k < KINDS.size(); k++) {
        assertEquals(0, counts.get(k * 4 + 3), "nothing but 200 and 503: " + summary);
      }
      long criticalOk = counts.get(0);
      long criticalAll = criticalOk + counts.get(1) + counts.get(2);
      assertTrue(
          criticalOk >= 0.99 * criticalAll && criticalAll > 20, "critical ≥ 99 %: " + summary);
      assertEquals(0, counts.get(2), "critical is never shed by the workers: " + summary);
      List<Long> critical = new ArrayList<>(latencies.get("critical"));
      critical.sort(null);
      long p99 = critical.get((int) Math.floor(0.99 * (critical.size() - 1)));
      assertTrue(
          p99 < TimeUnit.SECONDS.toNanos(3), "critical p99 " + p99 / 1_000_000 + " ms: " + summary);
      assertTrue(firstWorkerShed.containsKey("test"), "the workers shed test traffic: " + summary);
      for (String later : List.of("reads", "writes")) {
        Long at = firstWorkerShed.get(later);
        assertTrue(
            at == null || at >= firstWorkerShed.get("test"), "test traffic first: " + summary);
      }
      long testShed = counts.get(3 * 4 + 2);
      long writesShed = counts.get(4 + 2);
      assertTrue(testShed > writesShed, "test shed more than writes: " + summary);
      System.out.println("load shedding, 8 workers at 4x: " + summary + ", critical p99 " + p99);
    } finally {
      pool.shutdownNow();
      demo.close();
      Files.copy(
          dir.resolve("demo.log"),
          Path.of("target", "loadshedding-demo.log"),
          java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }
  }

  private static Map<String, Long> millis(Map<String, Long> nanos) {
    Map<String, Long> out = new TreeMap<>();
    nanos.forEach((k, v) -> out.put(k, v / 1_000_000));
    return out;
  }

  private HttpResponse<String> send(int port, Kind k) throws IOException, InterruptedException {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + k.path()))
            .timeout(Duration.ofSeconds(30))
            .method(k.method(), HttpRequest.BodyPublishers.noBody());
    if (k.header() != null) {
      b.header(k.header(), "true");
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }
}
