package dev.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.jaxrs.SluiceFeature;
import dev.sluice.store.memcached.MemcachedCounterStore;
import dev.sluice.testkit.MemcachedServer;
import dev.sluice.testkit.TcpProxy;
import dev.sluice.yaml.YamlRules;
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
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The store is never the client's problem: memcached killed, stalled, restarted empty or slow,
 * under 8 concurrent client threads, over HTTP on loopback.
 */
class FaultsIT {

  private static final Duration TIMEOUT = Duration.ofMillis(50);

  /** Allowed above the operation timeout for one store call on a loaded 2-core machine. */
  private static final long MARGIN_MILLIS = 150;

  private static final String RULES =
      """
      rules:
        - { id: open, match: { methods: [GET], prefix: /api }, key: [header:X-Api-Key],
            tiers: [ { limit: 100000, period: 1s } ] }
        - { id: closed, match: { methods: [PUT], prefix: /v1 }, key: [header:X-Api-Key],
            onStoreFailure: reject, tiers: [ { limit: 100000, period: 1s } ] }
      """;

  private MemcachedServer memcached;
  private final Outcomes outcomes = new Outcomes();

  @BeforeEach
  void start() {
    memcached = MemcachedServer.start();
  }

  @AfterEach
  void stop() {
    if (memcached != null) {
      memcached.close();
    }
  }

  /** What the store calls did, as the limiter's listener saw them. */
  static final class Outcomes {
    final AtomicLong worstStoreNanos = new AtomicLong();
    final AtomicInteger failed = new AtomicInteger();
    final AtomicInteger skipped = new AtomicInteger();
    volatile long faultStart = Long.MAX_VALUE;
    volatile long recovered = Long.MAX_VALUE;

    void record(boolean storeFailed, long nanos) {
      long now = System.nanoTime();
      if (storeFailed) {
        failed.incrementAndGet();
        worstStoreNanos.accumulateAndGet(nanos, Math::max);
        if (nanos < 1_000_000) {
          skipped.incrementAndGet(); // the breaker answered without waiting for the store
        }
      } else if (now > faultStart && recovered == Long.MAX_VALUE) {
        recovered = now;
      }
    }
  }

  private App app(String servers) {
    MemcachedCounterStore store =
        MemcachedCounterStore.builder().servers(servers).operationTimeout(TIMEOUT).build();
    return new App(
        SluiceFeature.builder(store)
            .rules(YamlRules.parse(RULES, "faults"))
            .listener((rules, d, nanos) -> outcomes.record(d.storeFailed(), nanos))
            .build(),
        store);
  }

  /**
   * Load from 8 threads for {@code seconds}; {@code fault} runs after 1 s, {@code heal} after 3 s.
   */
  private Map<Integer, Integer> load(
      App app, int seconds, Runnable fault, Runnable heal, AtomicLong worstHttp) throws Exception {
    Map<Integer, Integer> statuses = new ConcurrentHashMap<>();
    long end = System.nanoTime() + Duration.ofSeconds(seconds).toNanos();
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<?>> work = new ArrayList<>();
      for (int t = 0; t < 8; t++) {
        boolean put = t == 7;
        work.add(
            pool.submit(
                () -> {
                  while (System.nanoTime() < end) {
                    String key = "k" + ThreadLocalRandom.current().nextInt(100);
                    long t0 = System.nanoTime();
                    HttpResponse<String> r =
                        put
                            ? app.send("PUT", "/v1/organizations/o/product/1", "X-Api-Key", key)
                            : app.get("/api/v1/report", "X-Api-Key", key);
                    worstHttp.accumulateAndGet(System.nanoTime() - t0, Math::max);
                    statuses.merge(r.statusCode() * 10 + (put ? 1 : 0), 1, Integer::sum);
                  }
                  return null;
                }));
      }
      Thread.sleep(1_000); // let the load run before the fault
      outcomes.faultStart = System.nanoTime();
      fault.run();
      Thread.sleep(2_000); // the outage lasts 2 s
      long healed = System.nanoTime();
      heal.run();
      outcomes.faultStart = healed;
      outcomes.recovered = Long.MAX_VALUE;
      for (Future<?> f : work) {
        f.get(60, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    return statuses;
  }

  private void check(
      String scenario, Map<Integer, Integer> statuses, AtomicLong worstHttp, long healedAt) {
    int sent = statuses.values().stream().mapToInt(Integer::intValue).sum();
    int open5xx =
        statuses.entrySet().stream()
            .filter(e -> e.getKey() % 10 == 0 && e.getKey() / 10 >= 500)
            .mapToInt(Map.Entry::getValue)
            .sum();
    int closed503 = statuses.getOrDefault(5031, 0);
    int any500 =
        statuses.entrySet().stream()
            .filter(e -> e.getKey() / 10 == 500)
            .mapToInt(Map.Entry::getValue)
            .sum();
    long worstStore = outcomes.worstStoreNanos.get() / 1_000_000;
    long recovery =
        outcomes.recovered == Long.MAX_VALUE ? -1 : (outcomes.recovered - healedAt) / 1_000_000;
    Report.line(
        String.format(
            Locale.ROOT,
            "%s: %d requests from 8 threads; 5xx on fail-open rules %d; 503 on the "
                + "fail-closed rule %d; 500s %d; store failures %d, of which skipped by the breaker %d; worst store wait %d ms "
                + "(timeout %d ms); worst HTTP latency %d ms; limiting resumed %d ms after recovery",
            scenario,
            sent,
            open5xx,
            closed503,
            any500,
            outcomes.failed.get(),
            outcomes.skipped.get(),
            worstStore,
            TIMEOUT.toMillis(),
            worstHttp.get() / 1_000_000,
            recovery));
    assertEquals(0, open5xx, "no 5xx where the rule fails open: " + statuses);
    assertEquals(0, any500, "never a 500");
    assertTrue(outcomes.failed.get() > 0, "the fault was felt");
    assertTrue(outcomes.skipped.get() > 0, "the breaker opened and requests skipped the store");
    assertTrue(
        worstStore <= TIMEOUT.toMillis() + MARGIN_MILLIS,
        "a store call waited " + worstStore + " ms");
    assertTrue(recovery >= 0 && recovery <= 2_000, "recovered in " + recovery + " ms");
  }

  @Test
  void memcachedKilledUnderLoadThenRestarted() throws Exception {
    AtomicLong worstHttp = new AtomicLong();
    AtomicLong healed = new AtomicLong();
    try (App app = app(memcached.address())) {
      Map<Integer, Integer> statuses =
          load(
              app,
              6,
              memcached::kill,
              () -> {
                healed.set(System.nanoTime());
                memcached.restart();
              },
              worstHttp);
      check(
          "memcached killed (SIGKILL) for 2 s, restarted empty", statuses, worstHttp, healed.get());
    }
  }

  @Test
  void memcachedStalledUnderLoadThenResumed() throws Exception {
    AtomicLong worstHttp = new AtomicLong();
    AtomicLong healed = new AtomicLong();
    try (App app = app(memcached.address())) {
      Map<Integer, Integer> statuses =
          load(
              app,
              6,
              memcached::stall,
              () -> {
                healed.set(System.nanoTime());
                memcached.resume();
              },
              worstHttp);
      check(
          "memcached stalled (SIGSTOP) for 2 s, resumed (SIGCONT)",
          statuses,
          worstHttp,
          healed.get());
    }
  }

  @Test
  void aSlowStoreIsBoundedByTheTimeoutAndTheBreaker() throws Exception {
    AtomicLong worstHttp = new AtomicLong();
    AtomicLong healed = new AtomicLong();
    try (TcpProxy proxy = TcpProxy.to(memcached.port());
        App app = app("127.0.0.1:" + proxy.port())) {
      Map<Integer, Integer> statuses =
          load(
              app,
              6,
              () -> proxy.delay(300),
              () -> {
                healed.set(System.nanoTime());
                proxy.delay(0);
              },
              worstHttp);
      check(
          "memcached behind a proxy adding 300 ms each way for 2 s",
          statuses,
          worstHttp,
          healed.get());
    }
  }
}
