package dev.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.jaxrs.SluiceFeature;
import dev.sluice.store.inmemory.InMemoryCounterStore;
import dev.sluice.store.memcached.MemcachedCounterStore;
import dev.sluice.testkit.Memcached;
import dev.sluice.testkit.MemcachedServer;
import dev.sluice.yaml.YamlRules;
import java.lang.management.ManagementFactory;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Hostile identities, floods, spoofed addresses and path spellings. */
@Memcached
class HostileInputTest {

  private static MemcachedServer memcached;

  @BeforeAll
  static void start(MemcachedServer started) {
    memcached = started;
  }

  @Test
  void hostileIdentitiesNeverBreakTheProtocolNorShareACounter() {
    List<String> hostile =
        List.of(
            "with space",
            "cr\r\nlf",
            "\r\nflush_all",
            "\r\nflush_all\r\n",
            "x".repeat(10_240),
            "x".repeat(10_239) + "y",
            "ключ-鍵-🔑",
            "",
            " ",
            "\u0000",
            "a:b",
            "get sluice:r:a:1000:1");
    long itemsBefore = memcached.stat("curr_items");
    try (MemcachedCounterStore store =
        MemcachedCounterStore.builder()
            .servers(memcached.address())
            .prefix("hostile")
            .operationTimeout(Duration.ofSeconds(2))
            // Windows on the limiter's pinned clock: each identity's two requests share one.
            .storeClock(false)
            .build()) {
      RateLimiter limiter =
          RateLimiter.fixedWindow(store)
              .id("r")
              .tier(2, Duration.ofHours(1))
              .clock(InstantSource.fixed(Instant.parse("2026-01-01T00:30:00Z")))
              .denyCacheSize(0)
              .build();
      for (String id : hostile) {
        Decision d = limiter.tryAcquire(id);
        assertFalse(d.storeFailed(), () -> "store failed for " + printable(id));
        assertEquals(1, d.used(), () -> "a fresh counter for " + printable(id));
      }
      for (String id : hostile) {
        assertEquals(
            2, limiter.tryAcquire(id).used(), () -> "its own counter for " + printable(id));
      }
      assertTrue(
          memcached.stat("curr_items") >= itemsBefore + hostile.size(), "nothing was flushed");
      assertEquals(0, memcached.stat("cmd_flush"), "flush_all never ran");
    }
    Report.line(
        "hostile identities (spaces, CR/LF, \\r\\nflush_all, 10 KB, non-ASCII, empty, NUL): "
            + hostile.size()
            + " identities, 0 store failures, 0 shared counters, cmd_flush 0");
  }

  @Test
  void aMillionIdentitiesStayUnderTheInMemoryCap() {
    long cap = 100_000;
    InMemoryCounterStore store = InMemoryCounterStore.builder().maximumCounters(cap).build();
    RateLimiter limiter = RateLimiter.slidingWindow(store).tier(10, Duration.ofMinutes(1)).build();
    var memory = ManagementFactory.getMemoryMXBean();
    System.gc();
    long before = memory.getHeapMemoryUsage().getUsed();
    long peakCounters = 0;
    for (int i = 0; i < 1_000_000; i++) {
      assertTrue(limiter.tryAcquire("flood-" + i).allowed());
      if (i % 50_000 == 49_999) {
        peakCounters = Math.max(peakCounters, store.liveCounters());
      }
    }
    System.gc();
    long after = memory.getHeapMemoryUsage().getUsed();
    Report.line(
        String.format(
            Locale.ROOT,
            "flood, in-memory store capped at %,d counters: 1,000,000 identities; "
                + "live counters peaked at %,d; heap after GC %+.1f MB",
            cap,
            peakCounters,
            (after - before) / 1e6));
    assertTrue(peakCounters <= cap, "peaked at " + peakCounters);
    assertTrue(after - before < 200_000_000L, "heap grew " + (after - before) + " bytes");
  }

  /** Long identities (a 16 KB header each) cost the in-memory store no more than short ones. */
  @Test
  void aFloodOfLongIdentitiesStaysUnderTheInMemoryCap() {
    long cap = 20_000;
    InMemoryCounterStore store = InMemoryCounterStore.builder().maximumCounters(cap).build();
    RateLimiter limiter = RateLimiter.slidingWindow(store).tier(10, Duration.ofMinutes(1)).build();
    var memory = ManagementFactory.getMemoryMXBean();
    System.gc();
    long before = memory.getHeapMemoryUsage().getUsed();
    String padding = "x".repeat(16_000);
    for (int i = 0; i < 100_000; i++) {
      assertTrue(limiter.tryAcquire("flood-" + i + padding).allowed());
    }
    System.gc();
    long after = memory.getHeapMemoryUsage().getUsed();
    Report.line(
        String.format(
            Locale.ROOT,
            "flood of 16 KB identities, in-memory store capped at %,d counters: 100,000"
                + " identities; heap after GC %+.1f MB",
            cap,
            (after - before) / 1e6));
    assertTrue(store.liveCounters() <= cap, "live counters " + store.liveCounters());
    assertTrue(after - before < 200_000_000L, "heap grew " + (after - before) + " bytes");
  }

  @Test
  void aFloodIntoASmallMemcachedMakesItEvictWhileSluiceKeepsAnswering() throws Exception {
    try (MemcachedServer small = MemcachedServer.start(2);
        MemcachedCounterStore store =
            MemcachedCounterStore.builder()
                .servers(small.address())
                .prefix("flood")
                .operationTimeout(Duration.ofSeconds(1))
                .build()) {
      RateLimiter limiter = RateLimiter.fixedWindow(store).tier(10, Duration.ofMinutes(1)).build();
      int identities = 200_000;
      AtomicInteger next = new AtomicInteger();
      AtomicInteger failed = new AtomicInteger();
      ExecutorService pool = Executors.newFixedThreadPool(8);
      try {
        List<Future<?>> work = new java.util.ArrayList<>();
        for (int t = 0; t < 8; t++) {
          work.add(
              pool.submit(
                  () -> {
                    for (int i; (i = next.getAndIncrement()) < identities; ) {
                      failed.addAndGet(
                          limiter.tryAcquire("flood-" + i + "-" + "p".repeat(100)).storeFailed()
                              ? 1
                              : 0);
                    }
                    return null;
                  }));
        }
        for (Future<?> f : work) {
          f.get(5, TimeUnit.MINUTES);
        }
      } finally {
        pool.shutdownNow();
      }
      long evictions = small.stat("evictions");
      Report.line(
          String.format(
              Locale.ROOT,
              "flood, memcached with 2 MB: %,d identities from 8 threads; evictions %,d; "
                  + "store failures %d",
              identities,
              evictions,
              failed.get()));
      assertTrue(evictions > 0, "memcached evicted");
      assertEquals(0, failed.get(), "Sluice kept answering");
    }
  }

  private static final String RULES =
      """
      trustedProxies: [127.0.0.1/32]
      rules:
        - { id: by-ip, match: { prefix: /api/v1/report }, key: [ip], algorithm: token-bucket,
            tiers: [ { limit: 3, period: 1h } ] }
      """;

  @Test
  void aTrustedProxysForwardedForNamesTheClientThatIsLimited() {
    try (App app =
        new App(
            SluiceFeature.builder(InMemoryCounterStore.create())
                .rules(YamlRules.parse(RULES, "ip"))
                .build())) {
      for (int i = 0; i < 3; i++) {
        assertEquals(200, app.get("/api/v1/report", "X-Forwarded-For", "203.0.113.7").statusCode());
      }
      assertEquals(429, app.get("/api/v1/report", "X-Forwarded-For", "203.0.113.7").statusCode());
      for (int i = 0; i < 5; i++) {
        assertEquals(
            429,
            app.get(
                    "/api/v1/report",
                    "X-Forwarded-For",
                    "203.0.113.7",
                    "Forwarded",
                    "for=198.51.100." + i)
                .statusCode(),
            "the proxy appended X-Forwarded-For; the client's own Forwarded header is ignored");
      }
      assertEquals(
          200,
          app.get("/api/v1/report", "X-Forwarded-For", "203.0.113.8").statusCode(),
          "another client");
    }
  }

  @Test
  void aSpoofedHeaderFromAnUntrustedPeerNeverBypasses() {
    String untrusted =
        RULES.replace("trustedProxies: [127.0.0.1/32]", "trustedProxies: [10.0.0.0/8]");
    try (App app =
        new App(
            SluiceFeature.builder(InMemoryCounterStore.create())
                .rules(YamlRules.parse(untrusted, "ip"))
                .build())) {
      for (int i = 0; i < 3; i++) {
        app.get("/api/v1/report");
      }
      int bypasses = 0;
      for (int i = 0; i < 200; i++) {
        HttpResponse<String> r =
            app.get(
                "/api/v1/report",
                "X-Forwarded-For",
                "198.51.100." + (i % 250),
                "Forwarded",
                "for=\"198.51.100." + (i % 250) + "\"");
        bypasses += r.statusCode() == 200 ? 1 : 0;
      }
      Report.line(
          "spoofed X-Forwarded-For / Forwarded from an untrusted peer: 200 attempts, "
              + bypasses
              + " bypasses");
      assertEquals(0, bypasses);
    }
  }

  @Test
  void pathSpellingsOddMethodsAndOversizedHeadersCannotDodgeTheRule() throws Exception {
    String rules =
        """
        rules:
          - { id: report, match: { prefix: /api/v1/report }, key: [header:X-Api-Key], algorithm: token-bucket,
              tiers: [ { limit: 5, period: 1h } ] }
        """;
    try (App app =
        new App(
            SluiceFeature.builder(InMemoryCounterStore.create())
                .rules(YamlRules.parse(rules, "paths"))
                .build())) {
      String[] spellings = {
        "/api/v1/report",
        "/api/v1/report/",
        "/api//v1/report",
        "//api/v1/report",
        "/api/./v1/report",
        "/api/v1/x/../report",
        "/api/v1/%72eport",
        "/api%2Fv1%2Freport",
        "/API/v1/report"
      };
      int served = 0;
      StringBuilder seen = new StringBuilder();
      for (int round = 0; round < 2; round++) {
        for (String path : spellings) {
          int status =
              raw(
                  app.port,
                  "GET "
                      + path
                      + " HTTP/1.1\r\nHost: x\r\nX-Api-Key: same\r\nConnection: close\r\n\r\n");
          served += status == 200 ? 1 : 0;
          assertTrue(status < 500, path + " gave " + status);
          if (round == 0) {
            seen.append(path).append(' ').append(status).append("; ");
          }
        }
      }
      Report.line(
          "path spellings of /api/v1/report, same key, limit 5, two rounds of "
              + spellings.length
              + ": "
              + served
              + " served. First round: "
              + seen);
      assertTrue(served <= 5, "served " + served + " over a limit of 5: " + seen);

      // The same key, spent, and padded as HTTP and an application reading it would trim it.
      assertEquals(
          429,
          raw(
              app.port,
              "GET /api/v1/report HTTP/1.1\r\nHost: x\r\nX-Api-Key: same\r\nConnection: close\r\n\r\n"));
      String[] paddings = {"same\t", "same \t", "\tsame", "same\u0001", "\u0001same", "same\u001f"};
      for (String key : paddings) {
        int status =
            raw(
                app.port,
                "GET /api/v1/report HTTP/1.1\r\nHost: x\r\nX-Api-Key: "
                    + key
                    + "\r\nConnection: close\r\n\r\n");
        assertEquals(429, status, "the spent key padded as [" + key.replace("\t", "\\t") + "]");
      }

      int odd =
          raw(
              app.port,
              "FOO /api/v1/report HTTP/1.1\r\nHost: x\r\nX-Api-Key: odd\r\nConnection: close\r\n\r\n");
      assertNotEquals(500, odd);
      int big =
          raw(
              app.port,
              "GET /api/v1/report HTTP/1.1\r\nHost: x\r\nX-Api-Key: "
                  + "k".repeat(64 * 1024)
                  + "\r\nConnection: close\r\n\r\n");
      assertTrue(big < 500 || big == -1, "oversized header gave " + big);
      Report.line(
          "unknown method FOO: "
              + odd
              + "; a 64 KB X-Api-Key: "
              + (big == -1 ? "connection closed by the container" : big));
    }
  }

  /** Sends raw bytes and returns the status code, or -1 if the server closed without answering. */
  private static int raw(int port, String request) throws Exception {
    return RawHttp.status(port, request);
  }

  private static String printable(String s) {
    String head = s.length() > 30 ? s.substring(0, 30) + "…(" + s.length() + ")" : s;
    return head.replace("\r", "\\r").replace("\n", "\\n").replace("\u0000", "\\0");
  }
}
