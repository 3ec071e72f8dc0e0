package dev.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.example.Demo;
import dev.sluice.testkit.MemcachedServer;
import java.io.File;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Mixed load on the demo with memcached for {@code -Dsluice.soak.minutes} (10 by default): heap,
 * threads and file descriptors stay flat, and every response is a 200 or a 429. Runs only with
 * {@code -Psoak}.
 */
class SoakIT {

  static {
    // The JDK client keeps idle connections 20 minutes by default, Grizzly closes them after 30 s:
    // reusing one just as the server closes it is a transport error of the client, not of Sluice.
    // A client should keep connections for less time than the server does.
    System.setProperty("jdk.httpclient.keepalive.timeout", "10");
  }

  @Test
  void tenMinutesOfMixedLoadOnTheDemo() throws Exception {
    long minutes = Long.getLong("sluice.soak.minutes", 10);
    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    try (MemcachedServer memcached = MemcachedServer.start();
        Demo demo =
            Demo.start(
                new Demo.Options().host("127.0.0.1").port(0).memcached(memcached.address()),
                new PrintStream(OutputStream.nullOutputStream()))) {
      String base = "http://127.0.0.1:" + demo.port();
      String[][] calls = {
        {"GET", "/api/v1/report"},
        {"POST", "/api/v1/lead/7"},
        {"GET", "/v1/organizations/o%d/product/1"},
        {"PUT", "/v1/organizations/o%d/product/2"},
        {"GET", "/health"}
      };
      Map<Integer, Long> statuses = new ConcurrentHashMap<>();
      java.util.concurrent.atomic.AtomicLong transportErrors =
          new java.util.concurrent.atomic.AtomicLong();
      Map<String, Long> errorKinds = new ConcurrentHashMap<>();
      long end = System.nanoTime() + Duration.ofMinutes(minutes).toNanos();
      ExecutorService pool = Executors.newFixedThreadPool(8);
      List<long[]> samples = new ArrayList<>();
      try {
        List<Future<?>> work = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
          work.add(
              pool.submit(
                  () -> {
                    ThreadLocalRandom r = ThreadLocalRandom.current();
                    while (System.nanoTime() < end) {
                      String[] c = calls[r.nextInt(calls.length)];
                      HttpRequest req =
                          HttpRequest.newBuilder(
                                  URI.create(base + String.format(c[1], r.nextInt(20))))
                              .header("X-Api-Key", "key-" + r.nextInt(50))
                              .header("X-Customer-Id", "c" + r.nextInt(5))
                              .method(c[0], HttpRequest.BodyPublishers.noBody())
                              .build();
                      try {
                        statuses.merge(
                            http.send(req, HttpResponse.BodyHandlers.discarding()).statusCode(),
                            1L,
                            Long::sum);
                      } catch (java.io.IOException e) {
                        transportErrors.incrementAndGet();
                        errorKinds.merge(
                            c[0] + " " + e.getClass().getSimpleName() + ": " + e.getMessage(),
                            1L,
                            Long::sum);
                      }
                    }
                    return null;
                  }));
        }
        while (System.nanoTime() < end) {
          samples.add(sample());
          TimeUnit.SECONDS.sleep(Math.min(30, Math.max(1, minutes * 6)));
        }
        for (Future<?> f : work) {
          f.get(1, TimeUnit.MINUTES);
        }
      } finally {
        pool.shutdownNow();
      }
      samples.add(sample());
      long[] first = samples.get(1 < samples.size() - 1 ? 1 : 0);
      long[] last = samples.get(samples.size() - 1);
      long total = statuses.values().stream().mapToLong(Long::longValue).sum();
      Report.line(
          String.format(
              Locale.ROOT,
              "soak, %d min, 8 threads, mixed load on the demo with memcached: %,d "
                  + "requests, statuses %s, transport errors %d %s; heap after GC %.1f → %.1f MB, threads %d → %d, open files %d → %d",
              minutes,
              total,
              statuses,
              transportErrors.get(),
              errorKinds,
              first[0] / 1e6,
              last[0] / 1e6,
              first[1],
              last[1],
              first[2],
              last[2]));
      // Every response must be a 200 or a 429. Apart from responses, about one request in four
      // million dies in a connection-reuse race between Grizzly and the JDK client ("header parser
      // received no bytes" on a PUT/POST; GETs are retried by the client): bounded, so that a leak
      // or
      // a crash, which would fail many, still fails the soak.
      assertTrue(
          transportErrors.get() <= Math.max(1, total / 1_000_000),
          "transport errors: " + errorKinds);
      assertEquals(
          total,
          statuses.getOrDefault(200, 0L) + statuses.getOrDefault(429, 0L),
          "only 200s and 429s");
      assertTrue(last[0] < first[0] * 2 + 50_000_000L, "heap grew");
      assertTrue(last[1] <= first[1] + 10, "threads grew");
      assertTrue(last[2] <= first[2] + 50, "file descriptors grew");
    }
  }

  /** Heap after GC, live threads, open file descriptors. */
  private static long[] sample() {
    System.gc();
    long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    long threads = ManagementFactory.getThreadMXBean().getThreadCount();
    String[] fds = new File("/proc/self/fd").list();
    return new long[] {heap, threads, fds == null ? -1 : fds.length};
  }
}
