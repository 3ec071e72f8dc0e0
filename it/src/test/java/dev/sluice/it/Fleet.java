package dev.sluice.it;

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
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * A fleet of demo JVMs on one memcached, each under libfaketime at its own clock offset, each
 * reaching memcached through one {@link dev.sluice.testkit.TcpProxy}: instances can be killed and
 * started again (same offset, a new port), and requests sent to any of them. Close it when done.
 */
final class Fleet implements AutoCloseable {

  private static final HttpClient HTTP =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(5))
          .build();

  /** What one request got: its status (0 when no answer came), and whether it was counted. */
  record Answer(int status, boolean counted, String error) {}

  private final Path dir;
  private final Path rules;
  private final String store;
  private final int[] offsets;
  private final DemoProcess[] instances;
  private final int[] starts;

  /**
   * Starts {@code offsets.length} instances, instance {@code i} at {@code offsets[i]} seconds from
   * the host's clock, with {@code rulesYaml}, on the memcached at {@code store}.
   */
  Fleet(Path dir, String rulesYaml, String store, int[] offsets) throws Exception {
    this.dir = dir;
    this.rules = dir.resolve("rules.yaml");
    Files.writeString(rules, rulesYaml);
    this.store = store;
    this.offsets = offsets.clone();
    this.instances = new DemoProcess[offsets.length];
    this.starts = new int[offsets.length];
    try {
      for (int i = 0; i < offsets.length; i++) {
        start(i);
      }
    } catch (Exception | AssertionError e) {
      close();
      throw e;
    }
  }

  int size() {
    return instances.length;
  }

  int offset(int i) {
    return offsets[i];
  }

  boolean alive(int i) {
    DemoProcess d = instances[i];
    return d != null && d.process.isAlive();
  }

  /** The log of instance {@code i}'s latest start. */
  Path log(int i) {
    return dir.resolve("instance-" + i + "-start-" + starts[i] + ".log");
  }

  /**
   * Starts instance {@code i} and waits until it has measured memcached's clock and the store
   * answers its decisions.
   */
  synchronized void start(int i) throws Exception {
    starts[i]++;
    Path log = log(i);
    String skew = (offsets[i] >= 0 ? "+" : "") + offsets[i] + "s";
    DemoProcess d =
        DemoProcess.startAt(
            log,
            skew,
            "--rules",
            rules.toString(),
            "--memcached",
            store,
            // Three instances, memcached and the harness share two cores: a stall of 50 ms (the
            // default) is no store failure, and the harness tells those from injected faults.
            "--store-timeout",
            "250",
            "--workers",
            "16");
    instances[i] = d;
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!Files.readString(log).contains("memcached's")) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("instance " + i + " never measured memcached's clock: " + log);
      }
      Thread.sleep(20);
    }
    int answered = 0;
    while (answered < 3) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("the store never answered instance " + i + ": " + log);
      }
      Answer a = send(i, "GET", "/api/v1/report", "warm-up-" + UUID.randomUUID());
      answered = a.counted() ? answered + 1 : 0;
    }
  }

  /** Kills instance {@code i} (SIGKILL). */
  synchronized void kill(int i) throws InterruptedException {
    DemoProcess d = instances[i];
    if (d != null) {
      d.close();
    }
  }

  /** Sends one request to instance {@code i} for {@code client}; never throws. */
  Answer send(int i, String method, String path, String client) {
    DemoProcess d = instances[i];
    if (d == null) {
      return new Answer(0, false, "instance " + i + " not started");
    }
    HttpRequest r =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + d.port + path))
            .header("X-Client", client)
            .timeout(Duration.ofSeconds(10))
            .method(method, HttpRequest.BodyPublishers.noBody())
            .build();
    try {
      HttpResponse<Void> res = HTTP.send(r, HttpResponse.BodyHandlers.discarding());
      boolean counted = res.headers().firstValue("X-RateLimit-Remaining").isPresent();
      return new Answer(res.statusCode(), counted, null);
    } catch (IOException e) {
      return new Answer(0, false, e.toString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new Answer(0, false, e.toString());
    }
  }

  @Override
  public void close() throws InterruptedException {
    List<InterruptedException> failed = new ArrayList<>();
    for (int i = 0; i < instances.length; i++) {
      try {
        kill(i);
      } catch (InterruptedException e) {
        failed.add(e);
      }
    }
    if (!failed.isEmpty()) {
      throw failed.get(0);
    }
  }
}
