package dev.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.example.Demo;
import dev.sluice.testkit.Memcached;
import dev.sluice.testkit.MemcachedServer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Two demo instances on one memcached, turned by {@code java -jar cli/target/sluice.jar knobs …}:
 * both advertise and enforce a knob's limit within the stated bound, and the global switch turns
 * both off.
 */
@Memcached
class KnobsFleetIT {

  /**
   * The stated bound: a 1 s refresh plus a store round trip; 5 s leaves room for a busy machine.
   */
  private static final Duration BOUND = Duration.ofSeconds(5);

  private static MemcachedServer memcached;
  private static final List<Demo> demos = new ArrayList<>();
  // HTTP/1.1: no h2c upgrade attempt on the first request to each instance.
  private static final HttpClient http =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @BeforeAll
  static void start(MemcachedServer started) {
    memcached = started;
    for (int i = 0; i < 2; i++) {
      demos.add(
          Demo.start(
              new Demo.Options().host("127.0.0.1").port(0).memcached(memcached.address()),
              new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8)));
    }
  }

  @AfterAll
  static void stop() {
    demos.forEach(Demo::close);
  }

  @Test
  void aKnobSetOnceReachesEveryInstanceAndTheKillSwitchTurnsAllOff() throws Exception {
    String key = "k-" + UUID.randomUUID();
    assertEquals("10", get(demos.get(0), key).headers().firstValue("X-RateLimit-Limit").orElse(""));

    sluice("knobs", "set", "--memcached", memcached.address(), "rule:reports-per-key", "limit=2");
    for (Demo d : demos) {
      Duration took =
          within(
              () -> get(d, "probe-" + UUID.randomUUID()),
              r -> r.headers().firstValue("X-RateLimit-Limit").equals(Optional.of("2")));
      assertTrue(took.compareTo(BOUND) <= 0, "instance on port " + d.port() + " took " + took);
    }
    String fresh = "k-" + UUID.randomUUID();
    List<Integer> codes = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      codes.add(get(demos.get(i % 2), fresh).statusCode());
    }
    assertEquals(
        List.of(200, 200, 429, 429, 429, 429), codes, "2 for the whole fleet, on both instances");

    sluice("knobs", "set", "--memcached", memcached.address(), "global", "enabled=false");
    for (Demo d : demos) {
      within(() -> get(d, fresh), r -> r.statusCode() == 200);
      HttpResponse<String> r = get(d, fresh);
      assertEquals(200, r.statusCode());
      assertTrue(r.headers().firstValue("X-RateLimit-Limit").isEmpty(), "no limit applies");
    }

    sluice("knobs", "clear", "--memcached", memcached.address(), "global");
    sluice("knobs", "clear", "--memcached", memcached.address(), "rule:reports-per-key");
    for (Demo d : demos) {
      within(
          () -> get(d, "probe-" + UUID.randomUUID()),
          r -> r.headers().firstValue("X-RateLimit-Limit").equals(Optional.of("10")));
    }
  }

  private interface Call {
    HttpResponse<String> call() throws Exception;
  }

  /** How long until {@code call} answers as {@code wanted}; fails past twice the bound. */
  private static Duration within(Call call, Predicate<HttpResponse<String>> wanted)
      throws Exception {
    long t0 = System.nanoTime();
    long deadline = t0 + 2 * BOUND.toNanos();
    HttpResponse<String> last = call.call();
    while (!wanted.test(last)) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError(
            "not within "
                + 2 * BOUND.toSeconds()
                + " s: "
                + last.statusCode()
                + " "
                + last.headers());
      }
      Thread.sleep(50);
      last = call.call();
    }
    return Duration.ofNanos(System.nanoTime() - t0);
  }

  private static HttpResponse<String> get(Demo d, String apiKey) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + d.port() + "/api/v1/report"))
            .header("X-Api-Key", apiKey)
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** Runs the built command-line jar, as an operator would, and expects it to succeed. */
  private static void sluice(String... args) throws IOException, InterruptedException {
    Path jar = Path.of("..", "cli", "target", "sluice.jar").toAbsolutePath().normalize();
    assertTrue(Files.exists(jar), "build the cli module first: " + jar);
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-jar");
    cmd.add(jar.toString());
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "sluice " + String.join(" ", args));
    assertEquals(0, p.exitValue(), String.join(" ", args) + ": " + out);
  }
}
