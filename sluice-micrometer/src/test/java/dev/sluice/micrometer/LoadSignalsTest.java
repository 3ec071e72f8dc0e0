package dev.sluice.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import dev.sluice.control.Governor;
import dev.sluice.control.Knobs;
import dev.sluice.spi.ReferenceCounterStore;
import dev.sluice.spi.SharedValues;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.File;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.DoubleSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LoadSignalsTest {

  @TempDir Path dir;

  @Test
  void aGaugeIsReadAfreshAndAMissingOneThrows() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    DoubleSupplier s = LoadSignals.gauge(registry, "db.load", "db", "mongo");
    assertThrows(IllegalStateException.class, s::getAsDouble);
    double[] load = {1.5};
    registry.gauge(
        "db.load", io.micrometer.core.instrument.Tags.of("db", "mongo"), load, l -> l[0]);
    assertEquals(1.5, s.getAsDouble());
    load[0] = 4;
    assertEquals(4, s.getAsDouble());
  }

  @Test
  void anInstantQueryAnswerGivesItsSampleValues() {
    String json =
        "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
            + "{\"metric\":{\"value\":\"x\",\"job\":\"a\"},\"value\":[1700000000.5,\"2.5\"]},"
            + "{\"metric\":{},\"value\":[1700000000.5,\"NaN\"]}]}}";
    assertEquals(List.of("2.5", "NaN"), LoadSignals.values(json.getBytes(StandardCharsets.UTF_8)));
    assertThrows(
        IllegalStateException.class,
        () -> LoadSignals.values("{\"data\":{".getBytes(StandardCharsets.UTF_8)));
  }

  /**
   * A real Prometheus (Debian's package) scrapes a test endpoint every second; the signal reads
   * what it scraped, follows a change, refuses a query with no series, and steers a governor.
   */
  @Test
  void aPrometheusQueryReadsWhatARealServerScraped() throws Exception {
    String binary = findPrometheus();
    AtomicReference<String> load = new AtomicReference<>("2.5");
    HttpServer target =
        HttpServer.create(new InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0), 0);
    target.createContext(
        "/metrics",
        ex -> {
          byte[] body =
              ("# TYPE sluice_test_load gauge\nsluice_test_load " + load.get() + "\n")
                  .getBytes(StandardCharsets.UTF_8);
          ex.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4");
          ex.sendResponseHeaders(200, body.length);
          ex.getResponseBody().write(body);
          ex.close();
        });
    target.start();
    int port = freePort();
    Path config = dir.resolve("prometheus.yml");
    Files.writeString(
        config,
        "global: { scrape_interval: 1s, evaluation_interval: 1s }\n"
            + "scrape_configs:\n"
            + "  - job_name: sluice\n"
            + "    static_configs: [ { targets: ['127.0.0.1:"
            + target.getAddress().getPort()
            + "'] } ]\n");
    Process prometheus =
        new ProcessBuilder(
                binary,
                "--config.file=" + config,
                "--storage.tsdb.path=" + dir.resolve("data"),
                "--web.listen-address=127.0.0.1:" + port)
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("prometheus.log").toFile())
            .start();
    try {
      URI server = URI.create("http://127.0.0.1:" + port);
      DoubleSupplier signal =
          LoadSignals.prometheus(server, "sluice_test_load", Duration.ofSeconds(2));
      assertEquals(2.5, until(signal, 2.5));
      load.set("3.75");
      assertEquals(3.75, until(signal, 3.75), "it follows the scraped value");
      assertEquals(
          3.75,
          LoadSignals.prometheus(server, "max(sluice_test_load)", Duration.ofSeconds(2))
              .getAsDouble());
      IllegalStateException none =
          assertThrows(
              IllegalStateException.class,
              () ->
                  LoadSignals.prometheus(server, "no_such_metric", Duration.ofSeconds(2))
                      .getAsDouble());
      assertTrue(none.getMessage().contains("0 series"), none.getMessage());
      assertThrows(
          IllegalStateException.class,
          () -> LoadSignals.prometheus(server, "sum(", Duration.ofSeconds(2)).getAsDouble());

      load.set("1");
      until(signal, 1);
      SharedValues values = new ReferenceCounterStore().sharedValues().orElseThrow();
      Governor g =
          Governor.builder(values, "reindex")
              .signal(signal)
              .setpoint(2)
              .gains(24, 0.8, 0)
              .maxRate(300)
              .rampUp(Duration.ZERO)
              .build();
      g.tick();
      g.tick();
      assertEquals(1, g.state().load());
      assertTrue(
          Knobs.parse(values.get(Knobs.VALUE_NAME).orElseThrow().value())
                  .throttleRate("reindex")
                  .orElseThrow()
              > 0,
          "a load under the setpoint raised the rate");
    } finally {
      prometheus.destroy();
      if (!prometheus.waitFor(10, TimeUnit.SECONDS)) {
        prometheus.destroyForcibly();
      }
      target.stop(0);
    }
  }

  /** Reads {@code signal} until it gives {@code wanted}, for at most 60 s (Prometheus starting). */
  private static double until(DoubleSupplier signal, double wanted) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    RuntimeException last = null;
    while (System.nanoTime() < deadline) {
      try {
        double v = signal.getAsDouble();
        if (v == wanted) {
          return v;
        }
      } catch (RuntimeException e) {
        last = e;
      }
      Thread.sleep(200);
    }
    throw new AssertionError("prometheus never gave " + wanted, last);
  }

  private static String findPrometheus() {
    for (String d :
        System.getenv().getOrDefault("PATH", "/usr/bin").split(File.pathSeparator, -1)) {
      File f = new File(d, "prometheus");
      if (f.canExecute()) {
        return f.getPath();
      }
    }
    throw new AssertionError(
        "this test runs a real Prometheus server: apt-get install -y prometheus (.ci/run does)");
  }

  private static int freePort() throws java.io.IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }
}
