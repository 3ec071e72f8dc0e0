package dev.sluice.it;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Outcome;
import dev.sluice.RateLimiter;
import dev.sluice.Slots;
import dev.sluice.Sync;
import dev.sluice.http.RequestLimiter;
import dev.sluice.http.Rule;
import dev.sluice.http.RuleSet;
import dev.sluice.http.TestRequest;
import dev.sluice.store.memcached.MemcachedCounterStore;
import dev.sluice.testkit.Memcached;
import dev.sluice.testkit.MemcachedServer;
import dev.sluice.testkit.TcpProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Writes that time out and then succeed, on a real memcached behind a proxy that holds every byte
 * past the operation timeout: a slot counted late is given back, and a two-layer push that timed
 * out is never sent again.
 */
@Memcached
class LateWritesIT {

  private static MemcachedServer memcached;

  @BeforeAll
  static void start(MemcachedServer started) {
    memcached = started;
  }

  private static MemcachedCounterStore store(int port, String prefix) {
    return MemcachedCounterStore.builder()
        .servers("127.0.0.1:" + port)
        .prefix(prefix)
        .operationTimeout(Duration.ofMillis(50))
        .build();
  }

  @Test
  void slotsCountedAfterTheClientGaveUpAreGivenBack() throws Exception {
    Rule rule =
        Rule.builder("in-flight")
            .path("/**")
            .key("header:K")
            .concurrency(2, Duration.ofSeconds(30))
            .build();
    try (TcpProxy proxy = TcpProxy.to(memcached.port());
        MemcachedCounterStore s = store(proxy.port(), "late-slots")) {
      RequestLimiter l =
          RequestLimiter.builder(s).rules(RuleSet.builder().rule(rule).build()).build();
      TestRequest request = TestRequest.get("/a").header("K", "k");
      // Warm: a store memcached has not answered yet waits longer than the operation timeout.
      Outcome warm = new Outcome();
      assertTrue(l.decide(TestRequest.get("/a").header("K", "warm-up"), warm));
      assertFalse(warm.storeFailed());
      l.slots(warm).release();
      proxy.delay(300);
      List<Slots> held = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        Outcome out = new Outcome();
        assertTrue(l.decide(request, out), "failed open");
        assertTrue(out.storeFailed());
        held.add(l.slots(out));
      }
      held.forEach(Slots::release); // the three complete while memcached is still slow
      proxy.delay(0);
      // Nothing is in flight: once the late writes and their releases land, two are admitted.
      assertTrue(
          MemcachedServer.await(
              Duration.ofSeconds(5),
              () -> {
                Outcome o = new Outcome();
                boolean admitted = l.decide(request, o) && !o.storeFailed();
                l.slots(o).release();
                return admitted;
              }),
          "a slot is free");
      Outcome first = new Outcome();
      Outcome second = new Outcome();
      assertTrue(l.decide(request, first));
      assertTrue(l.decide(request, second), "both slots free: none leaked");
      assertFalse(l.decide(request, new Outcome()), "and the limit holds");
      l.slots(first).release();
      l.slots(second).release();
    }
  }

  /** A year of 366 days: one window for the whole test, whenever it runs. */
  private static final Duration YEAR = Duration.ofDays(366);

  @Test
  void aTwoLayerPushThatTimedOutIsNotSentAgain() throws Exception {
    try (TcpProxy proxy = TcpProxy.to(memcached.port());
        MemcachedCounterStore s = store(proxy.port(), "late-push")) {
      RateLimiter l =
          RateLimiter.fixedWindow(s)
              .id("api")
              .tier(1_000, YEAR)
              .sync(Sync.every(Duration.ofMillis(100)))
              .build();
      // The first request of a window is pushed at once: it lands before the stall.
      assertTrue(l.tryAcquire("k").allowed());
      assertTrue(MemcachedServer.await(Duration.ofSeconds(5), () -> shared() == 1));
      proxy.delay(300);
      for (int i = 0; i < 19; i++) {
        assertTrue(l.tryAcquire("k").allowed());
      }
      Thread.sleep(2_000); // the stall: every push for 2 s times out, and lands late
      proxy.delay(0);
      assertTrue(
          MemcachedServer.await(Duration.ofSeconds(5), () -> shared() >= 20),
          "the late push landed: " + shared());
      // Pushed again, it would land within an interval or two (100 ms each).
      assertFalse(
          MemcachedServer.await(Duration.ofMillis(500), () -> shared() > 20),
          "memcached holds each permit once: " + shared());
    }
  }

  /** The fleet's count of the test's window, read from memcached as an operator would. */
  private static long shared() {
    long window = System.currentTimeMillis() / YEAR.toMillis();
    List<String> lines =
        memcached.command("get late-push:api:k:" + YEAR.toMillis() + ":w1." + window, "END");
    return lines.size() < 2 || !lines.get(0).startsWith("VALUE")
        ? 0
        : Long.parseLong(lines.get(1).trim());
  }
}
