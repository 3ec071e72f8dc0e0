package dev.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
import dev.sluice.store.memcached.MemcachedServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Writes that time out and then succeed, on a real memcached behind a proxy that holds every byte
 * past the operation timeout: a slot counted late is given back, and a two-layer push that timed
 * out is never sent again.
 */
class LateWritesTest {

  private static MemcachedServer memcached;

  @BeforeAll
  static void start() {
    memcached = MemcachedServer.start();
  }

  @AfterAll
  static void stop() {
    memcached.close();
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
    try (DelayingProxy proxy = new DelayingProxy(memcached.port(), 0);
        MemcachedCounterStore s = store(proxy.port(), "late-slots")) {
      RequestLimiter l =
          RequestLimiter.builder(s).rules(RuleSet.builder().rule(rule).build()).build();
      TestRequest request = TestRequest.get("/a").header("K", "k");
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

  @Test
  void aTwoLayerPushThatTimedOutIsNotSentAgain() throws Exception {
    try (DelayingProxy proxy = new DelayingProxy(memcached.port(), 0);
        MemcachedCounterStore s = store(proxy.port(), "late-push");
        MemcachedCounterStore direct = store(memcached.port(), "late-push")) {
      RateLimiter l =
          RateLimiter.fixedWindow(s)
              .id("api")
              .tier(1_000, Duration.ofHours(1))
              .sync(Sync.every(Duration.ofMillis(100)))
              .build();
      // The first request of a window is pushed at once: let it land before the stall.
      assertTrue(l.tryAcquire("k").allowed());
      Thread.sleep(300);
      proxy.delay(300);
      for (int i = 0; i < 19; i++) {
        assertTrue(l.tryAcquire("k").allowed());
      }
      Thread.sleep(2_000); // pushes time out for 2 s
      proxy.delay(0);
      Thread.sleep(1_000); // and whatever is late lands
      RateLimiter reader =
          RateLimiter.fixedWindow(direct).id("api").tier(1_000, Duration.ofHours(1)).build();
      long counted = 1_000 - reader.tryAcquire("k").remaining() - 1;
      assertEquals(20, counted, "memcached holds each permit once");
    }
  }
}
