package dev.sluice.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BenchCommandTest {

  private HttpServer server;
  private final Map<String, AtomicInteger> perKey = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> perPath = new ConcurrentHashMap<>();
  private final AtomicLong stallFirstMillis = new AtomicLong();
  private final AtomicInteger seen = new AtomicInteger();
  private String url;

  @TempDir Path dir;

  /** A tiny limited API: each X-Api-Key gets 5 answers of 200, then 429. */
  @BeforeEach
  void start() throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.setExecutor(Executors.newFixedThreadPool(8));
    server.createContext(
        "/api",
        ex -> {
          if (seen.getAndIncrement() == 0 && stallFirstMillis.get() > 0) {
            try {
              Thread.sleep(stallFirstMillis.get());
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
          perPath
              .computeIfAbsent(ex.getRequestURI().getPath(), k -> new AtomicInteger())
              .incrementAndGet();
          String key = String.valueOf(ex.getRequestHeaders().getFirst("X-Api-Key"));
          int n = perKey.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
          // Key client-1's answers carry no rate-limit header, as a limiter that failed open.
          if (!key.equals("client-1")) {
            ex.getResponseHeaders().add(n % 2 == 0 ? "ratelimit" : "X-RateLimit-Limit", "5");
          }
          ex.sendResponseHeaders(n <= 5 ? 200 : 429, -1);
          ex.close();
        });
    server.start();
    url = "http://127.0.0.1:" + server.getAddress().getPort() + "/api";
  }

  @AfterEach
  void stop() {
    server.stop(0);
  }

  @Test
  void countsEveryRequestAndStatus() {
    Run r = Run.of("bench", "--url", url, "--rate", "200", "--duration", "1s", "--keys", "4");
    assertEquals(0, r.code(), r.out() + r.err());
    assertTrue(
        r.out().contains("requests: 200 planned, 200 sent, 200 answered, 0 errors"), r.out());
    // 4 keys × 5 answers of 200, the other 180 refused.
    assertTrue(r.out().contains("status:  200: 20  429: 180"), r.out());
    assertTrue(r.out().contains("first 429 in second 1 of the run"), r.out());
    assertEquals(4, perKey.size());
    assertTrue(r.out().contains("latency (ms, from when each request was due): p50 "), r.out());
  }

  @Test
  void countsTheSuccessesThatCarryNoRateLimitHeader() {
    Run r = Run.of("bench", "--url", url, "--rate", "200", "--duration", "1s", "--keys", "4");
    assertEquals(0, r.code(), r.out() + r.err());
    // 20 answers of 200, 5 per key; client-1's 5 carry no header, whatever the case of the others'.
    assertTrue(
        r.out()
            .contains(
                "2xx without rate-limit headers (no rule, or failed open): 5 of 20 (25.00 %)"),
        r.out());
  }

  @Test
  void theWarmUpIsNeitherMeasuredNorSpentFromTheMeasuredKeys() {
    Run r =
        Run.of(
            "bench",
            "--url",
            url,
            "--rate",
            "100",
            "--duration",
            "1s",
            "--keys",
            "2",
            "--warmup",
            "1s");
    assertEquals(0, r.code(), r.out() + r.err());
    assertTrue(r.out().contains("requests: 100 planned, 100 sent, 100 answered"), r.out());
    assertTrue(r.out().contains("status:  200: 10  429: 90"), r.out());
    assertEquals(100, perKey.get("warmup-0").get() + perKey.get("warmup-1").get());
  }

  @Test
  void severalUrlsAreLoadedInTurn() {
    Run r =
        Run.of(
            "bench", "--url", url + "/a", "--url", url + "/b", "--rate", "100", "--duration", "1s");
    assertEquals(0, r.code(), r.out() + r.err());
    assertEquals(50, perPath.get("/api/a").get());
    assertEquals(50, perPath.get("/api/b").get());
  }

  @Test
  void aStallShowsInEveryRequestThatWaitedBehindIt() throws InterruptedException {
    stallFirstMillis.set(600);
    LoadGenerator.Plan plan =
        new LoadGenerator.Plan(
            java.util.List.of(URI.create(url)),
            100,
            Duration.ofSeconds(1),
            1,
            Map.of(),
            "X-Api-Key",
            0,
            Duration.ofSeconds(10),
            Duration.ZERO);
    LoadGenerator.Result r = LoadGenerator.run(plan, ms -> {});
    assertEquals(100, r.answered());
    // Requests due in the first 600 ms waited behind the stall; measured from when each was
    // due, about 60 of the 100 are late by up to 600 ms, so the 90th percentile is ≥ 300 ms even
    // though the server answered each of them at once. Timing from the send would report ~1 ms.
    assertTrue(
        r.latencyMicros().getValueAtPercentile(90) >= 300_000,
        () -> "p90 " + r.latencyMicros().getValueAtPercentile(90) + " µs");
    assertTrue(r.latencyMicros().getMaxValue() >= 590_000);
  }

  @Test
  void writesThePercentileFileAndTwoPictures() throws IOException {
    Path out = dir.resolve("run");
    Run r =
        Run.of(
            "bench",
            "--url",
            url,
            "--rate",
            "50",
            "--duration",
            "1s",
            "--keys",
            "2",
            "--out",
            out.toString());
    assertEquals(0, r.code(), r.out() + r.err());
    String hgrm = Files.readString(out.resolve("latency.hgrm"));
    assertTrue(hgrm.contains("Total count    =           50]"), hgrm);
    for (String png : new String[] {"latency.png", "status.png"}) {
      byte[] b = Files.readAllBytes(out.resolve(png));
      assertTrue(b.length > 1000 && b[1] == 'P' && b[2] == 'N' && b[3] == 'G', png);
    }
    // Runs compare on one chart.
    Path both = dir.resolve("both.png");
    Run plot =
        Run.of(
            "plot",
            "--out",
            both.toString(),
            "a=" + out.resolve("latency.hgrm"),
            "b=" + out.resolve("latency.hgrm"));
    assertEquals(0, plot.code(), plot.err());
    assertTrue(Files.size(both) > 1000);
    java.util.List<double[]> rows = PlotCommand.read(out.resolve("latency.hgrm"));
    assertEquals(0.0, rows.get(0)[0], "the first row is the 0th percentile");
    assertEquals(100.0, rows.get(rows.size() - 1)[0], 1e-9, "the last is the 100th");
    Run.of("plot", "--out", both.toString(), "a=" + dir.resolve("none.hgrm")).failsWithOneLine(1);
    Run.of("plot", "--out", both.toString(), "nolabel").failsWithOneLine(2);
  }

  @Test
  void onlyLoopbackUnlessTheHostIsNamedAndEveryRunIsBounded() {
    Run remote =
        Run.of("bench", "--url", "http://192.0.2.1/", "--rate", "10", "--duration", "1s")
            .failsWithOneLine(2);
    assertTrue(remote.err().contains("--allow-host 192.0.2.1"), remote.err());
    Run.of("bench", "--url", url, "--rate", "0", "--duration", "1s").failsWithOneLine(2);
    Run.of("bench", "--url", url, "--rate", "10", "--duration", "2h").failsWithOneLine(2);
    Run.of("bench", "--url", url, "--rate", "100000", "--duration", "1h").failsWithOneLine(2);
    Run.of("bench", "--url", "ftp://127.0.0.1/", "--rate", "1", "--duration", "1s")
        .failsWithOneLine(2);
    Run.of("bench", "--url", url, "--rate", "1", "--duration", "1s", "--header", "nocolon")
        .failsWithOneLine(2);
    Run.of("bench", "--url", url, "--rate", "1", "--duration", "1s", "--header", "Host:x")
        .failsWithOneLine(2);
    Run.of("bench", "--url", url, "--rate", "fast", "--duration", "1s").failsWithOneLine(2);
    assertEquals(0, seen.get(), "no request is sent when an argument is refused");
  }

  @Test
  void aServerThatIsNotThereIsCountedNotFatal() throws IOException {
    int port;
    try (java.net.ServerSocket s =
        new java.net.ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    Run r =
        Run.of(
            "bench", "--url", "http://127.0.0.1:" + port + "/", "--rate", "20", "--duration", "1s");
    assertEquals(1, r.code(), r.out());
    assertTrue(r.out().contains("20 sent, 0 answered, 20 errors"), r.out());
    assertTrue(r.out().contains("first error: ConnectException"), r.out());
  }
}
