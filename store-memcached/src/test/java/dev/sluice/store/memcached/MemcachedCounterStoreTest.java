package dev.sluice.store.memcached;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.StoreStatus;
import dev.sluice.spi.CounterUpdate;
import dev.sluice.spi.Counts;
import dev.sluice.spi.FakeClock;
import dev.sluice.testkit.Memcached;
import dev.sluice.testkit.MemcachedServer;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

@Memcached
class MemcachedCounterStoreTest {

  private static MemcachedServer server;
  private static final AtomicInteger PREFIX = new AtomicInteger();
  private final FakeClock clock = new FakeClock(System.currentTimeMillis() / 60_000 * 60_000);
  private MemcachedCounterStore store;

  @BeforeAll
  static void startMemcached(MemcachedServer started) {
    server = started;
  }

  @AfterEach
  void closeStore() {
    if (store != null) {
      store.close();
    }
  }

  private MemcachedCounterStore store(Duration timeout) {
    store =
        MemcachedCounterStore.builder()
            .servers(server.address())
            .clock(clock)
            .prefix("t" + PREFIX.incrementAndGet())
            .operationTimeout(timeout)
            .circuitBreaker(3, Duration.ofMillis(300))
            .build();
    return store;
  }

  @Test
  void aDecisionIssuesOneIncrPerTierAndReadsEachPreviousWindowOnce() {
    MemcachedCounterStore first = store(Duration.ofSeconds(2));
    String prefix = "t" + PREFIX.get();
    for (int i = 0; i < 5; i++) {
      // Creating a counter is counted apart from incr_hits/incr_misses: create them first.
      threeTiers(first).tryAcquire("k" + i);
    }
    try (MemcachedCounterStore fresh =
        MemcachedCounterStore.builder()
            .servers(server.address())
            .clock(clock)
            .prefix(prefix)
            .operationTimeout(Duration.ofSeconds(2))
            .build()) {
      RateLimiter limiter = threeTiers(fresh);
      int decisions = 50;
      Map<String, String> before = server.stats();
      int connections = fresh.connectionsOpened();
      for (int i = 0; i < decisions; i++) {
        Decision d = limiter.tryAcquire("k" + (i % 5));
        assertTrue(d.allowed() && !d.storeFailed(), d::toString);
      }
      Map<String, String> after = server.stats();
      assertEquals(3L * decisions, delta(before, after, "incr_hits"), "one incr per tier");
      assertEquals(0, delta(before, after, "incr_misses"));
      assertEquals(
          3L * 5, delta(before, after, "cmd_get"), "each previous window read once per key");
      assertEquals(0, delta(before, after, "cmd_set"), "no sets");
      assertEquals(connections, fresh.connectionsOpened(), "no new client connection");

      Map<String, String> again = server.stats();
      for (int i = 0; i < decisions; i++) {
        limiter.tryAcquire("k" + (i % 5));
      }
      Map<String, String> last = server.stats();
      assertEquals(3L * decisions, delta(again, last, "incr_hits"));
      assertEquals(
          0, delta(again, last, "cmd_get"), "the previous windows are remembered for the window");
    }
  }

  @Test
  void aRememberedPreviousCountServesOnlyTheWindowAfterIt() {
    MemcachedCounterStore s = store(Duration.ofSeconds(2));
    long w = clock.millis() / 1000;
    for (int i = 0; i < 3; i++) {
      s.increment(List.of(new CounterUpdate("r", "moving", 1000, w, 1)));
    }
    for (int i = 0; i < 4; i++) {
      Counts next = s.increment(List.of(new CounterUpdate("r", "moving", 1000, w + 1, 1)));
      assertEquals(Counts.of(i + 1, 3), next, "window w+1 sees w's count");
    }
    Map<String, String> before = server.stats();
    Counts later = s.increment(List.of(new CounterUpdate("r", "moving", 1000, w + 2, 1)));
    assertEquals(Counts.of(1, 4), later, "window w+2 sees w+1's count, not w's");
    assertEquals(1, delta(before, server.stats(), "cmd_get"), "w+1 read once");
    Counts again = s.increment(List.of(new CounterUpdate("r", "moving", 1000, w + 2, 1)));
    assertEquals(Counts.of(2, 4), again);
  }

  private RateLimiter threeTiers(MemcachedCounterStore s) {
    return RateLimiter.slidingWindow(s)
        .clock(clock)
        .tier(1_000, Duration.ofSeconds(1))
        .tier(10_000, Duration.ofMinutes(1))
        .tier(100_000, Duration.ofHours(1))
        .build();
  }

  private static long delta(Map<String, String> before, Map<String, String> after, String stat) {
    return Long.parseLong(after.get(stat)) - Long.parseLong(before.get(stat));
  }

  @Test
  void countsAreSharedByEveryStoreOnTheSameServers() {
    MemcachedCounterStore a = store(Duration.ofSeconds(2));
    String prefix = "t" + PREFIX.get();
    try (MemcachedCounterStore b =
        MemcachedCounterStore.builder()
            .servers(server.address())
            .prefix(prefix)
            .operationTimeout(Duration.ofSeconds(2))
            .build()) {
      long w = clock.millis() / 1000;
      a.increment(List.of(new CounterUpdate("r", "shared", 1000, w, 2)));
      assertEquals(
          Counts.of(3, 0), b.increment(List.of(new CounterUpdate("r", "shared", 1000, w, 1))));
    }
  }

  @Test
  void windowsLiveTwoPeriodsPlusSlack() {
    MemcachedCounterStore s = store(Duration.ofSeconds(2));
    CounterUpdate u = new CounterUpdate("r", "ttl", 1000, clock.millis() / 1000, 1);
    s.increment(List.of(u));
    long ttl = ttlOf(s.keyOf(u));
    assertTrue(ttl >= 11 && ttl <= 12, "2 s + 10 s slack, was " + ttl);
  }

  @Test
  void aThirtyOneDayWindowGetsAnAbsoluteExpiry() {
    MemcachedCounterStore s = store(Duration.ofSeconds(2));
    long period = Duration.ofDays(31).toMillis();
    assertTrue(s.expiry(period) > 1_700_000_000, "sent as a Unix time: " + s.expiry(period));
    CounterUpdate u = new CounterUpdate("r", "month", period, clock.millis() / period, 1);
    s.increment(List.of(u));
    assertEquals(Counts.of(2, 0), s.increment(List.of(u)), "the counter survived its creation");
    long ttl = ttlOf(s.keyOf(u));
    // The absolute expiry is counted from the store's clock, which this test sets behind real time.
    long behind = System.currentTimeMillis() / 1000 - clock.millis() / 1000;
    long expected = 62L * 24 * 3600 + MemcachedCounterStore.TTL_SLACK_SECONDS - behind;
    assertTrue(
        Math.abs(ttl - expected) <= 5,
        "memcached reports " + ttl + " s left, expected about " + expected);
  }

  @Test
  void hostileIdentitiesNeverReachTheWireRaw() {
    MemcachedCounterStore s = store(Duration.ofSeconds(2));
    List<String> hostile =
        List.of(
            "with space",
            "cr\r\nlf",
            "\r\nflush_all",
            "x".repeat(10_240),
            "ключ",
            "",
            "a:b",
            "#digest-lookalike",
            "\u0000",
            "ok-id_1.2@x/y+z=,~");
    Set<String> keys = new HashSet<>();
    for (String id : hostile) {
      String key = s.keyOf(new CounterUpdate("rule", id, 1000, 1, 1));
      assertTrue(key.length() <= 250, key);
      assertTrue(key.chars().allMatch(c -> c > 0x20 && c < 0x7f), () -> "unsafe byte in " + key);
      assertTrue(keys.add(key), "two identities share " + key);
    }
    assertTrue(
        keys.contains("t" + PREFIX.get() + ":rule:ok-id_1.2@x/y+z=,~:1000:w1.1"),
        "safe ids stay readable");
    long items = server.stat("curr_items");
    for (String id : hostile) {
      s.increment(List.of(new CounterUpdate("rule", id, 1000, clock.millis() / 1000, 1)));
    }
    assertEquals(items + hostile.size(), server.stat("curr_items"), "flush_all did not run");
  }

  @Test
  void aStalledServerCostsAtMostTheTimeoutThenTheBreakerSkipsIt() {
    MemcachedCounterStore s = store(Duration.ofMillis(50));
    RateLimiter limiter =
        RateLimiter.slidingWindow(s).clock(clock).tier(1, Duration.ofSeconds(1)).build();
    assertTrue(limiter.tryAcquire("stall").allowed());
    server.stall();
    try {
      long worst = 0;
      for (int i = 0; i < 5; i++) {
        long t0 = System.nanoTime();
        Decision d = limiter.tryAcquire("stall");
        worst = Math.max(worst, System.nanoTime() - t0);
        assertTrue(d.allowed(), "fails open");
        assertEquals(StoreStatus.FAILED_OPEN, d.storeStatus());
      }
      assertTrue(
          worst < Duration.ofMillis(50 + 250).toNanos(), "waited " + worst / 1_000_000 + " ms");
      assertTrue(
          s.breakerOpen(s.keyOf(new CounterUpdate("default", "stall", 1000, 0, 1))),
          "breaker open after 3 failures");
    } finally {
      server.resume();
    }
    assertTrue(
        MemcachedServer.await(
            Duration.ofSeconds(3), () -> !limiter.tryAcquire("other").storeFailed()),
        "limiting resumes once the server answers and the breaker lets a probe through");
  }

  @Test
  void aKilledServerFailsOpenAndARestartedOneLimitsAgain() {
    MemcachedCounterStore s = store(Duration.ofMillis(50));
    RateLimiter limiter =
        RateLimiter.fixedWindow(s)
            .clock(clock)
            .tier(2, Duration.ofMinutes(1))
            .denyCacheSize(0)
            .build();
    RateLimiter closed =
        RateLimiter.fixedWindow(s)
            .id("closed")
            .clock(clock)
            .tier(2, Duration.ofMinutes(1))
            .failClosed(true)
            .build();
    server.kill();
    try {
      for (int i = 0; i < 5; i++) {
        Decision d = limiter.tryAcquire("k");
        assertTrue(d.allowed());
        assertEquals(StoreStatus.FAILED_OPEN, d.storeStatus());
      }
      Decision d = closed.tryAcquire("k");
      assertFalse(d.allowed());
      assertEquals(StoreStatus.FAILED_CLOSED, d.storeStatus());
    } finally {
      server.restart();
    }
    long restarted = System.nanoTime();
    assertTrue(
        MemcachedServer.await(
            Duration.ofSeconds(5), () -> !limiter.tryAcquire("probe").storeFailed()),
        "the store answers again");
    long recovery = (System.nanoTime() - restarted) / 1_000_000;
    assertTrue(recovery < 2_000, "recovered in " + recovery + " ms");
    assertTrue(limiter.tryAcquire("k").allowed(), "an empty server starts the counts over");
    assertTrue(limiter.tryAcquire("k").allowed());
    assertFalse(limiter.tryAcquire("k").allowed(), "and limits again");
  }

  @Test
  void keysSpreadOverSeveralServersByConsistentHashing() {
    try (MemcachedServer second = MemcachedServer.start();
        MemcachedServer third = MemcachedServer.start()) {
      store =
          MemcachedCounterStore.builder()
              .servers(server.address() + "," + second.address() + "," + third.address())
              .prefix("ring" + PREFIX.incrementAndGet())
              .operationTimeout(Duration.ofSeconds(2))
              .build();
      long[] before = {items(server), items(second), items(third)};
      for (int i = 0; i < 300; i++) {
        store.increment(
            List.of(new CounterUpdate("r", "client-" + i, 60_000, clock.millis() / 60_000, 1)));
      }
      long[] added = {
        items(server) - before[0], items(second) - before[1], items(third) - before[2]
      };
      assertEquals(300, added[0] + added[1] + added[2]);
      for (long a : added) {
        assertTrue(a > 50, "each node holds a share: " + java.util.Arrays.toString(added));
      }
      // Where KeyHash's ring puts them: a client set up as KeyHash says finds every counter.
      net.spy.memcached.NodeLocator ring =
          new net.spy.memcached.KetamaNodeLocator(
              new java.util.ArrayList<>(store.client().getNodeLocator().getAll()),
              KeyHash.INSTANCE);
      for (int i = 0; i < 300; i++) {
        String key =
            store.keyOf(new CounterUpdate("r", "client-" + i, 60_000, clock.millis() / 60_000, 1));
        assertEquals(
            ring.getPrimary(key).getSocketAddress(),
            store.client().getNodeLocator().getPrimary(key).getSocketAddress(),
            key);
      }
    }
  }

  /** An identity whose counter of window {@code w} lives on {@code node}. */
  private static String identityOn(MemcachedCounterStore s, MemcachedServer node, long w) {
    for (int i = 0; ; i++) {
      String id = "id-" + i;
      String key = s.keyOf(new CounterUpdate("r", id, 60_000, w, 1));
      if (s.client()
          .getNodeLocator()
          .getPrimary(key)
          .getSocketAddress()
          .equals(node.socketAddress())) {
        return id;
      }
    }
  }

  @Test
  void aDeadNodeOpensOnlyItsOwnBreakerWhenABatchSpansNodes() {
    try (MemcachedServer sick = MemcachedServer.start()) {
      store =
          MemcachedCounterStore.builder()
              .servers(server.address() + "," + sick.address())
              .prefix("span" + PREFIX.incrementAndGet())
              .operationTimeout(Duration.ofMillis(100))
              .circuitBreaker(3, Duration.ofMinutes(5))
              .build();
      long w = clock.millis() / 60_000;
      CounterUpdate onSick = new CounterUpdate("r", identityOn(store, sick, w), 60_000, w, 1);
      CounterUpdate onHealthy = new CounterUpdate("r", identityOn(store, server, w), 60_000, w, 1);
      sick.stall();
      try {
        for (int i = 0; i < 5; i++) {
          assertThrows(
              StoreUnavailableException.class, () -> store.increment(List.of(onHealthy, onSick)));
        }
        assertTrue(store.breakerOpen(store.keyOf(onSick)), "the stalled node's breaker opened");
        assertFalse(
            store.breakerOpen(store.keyOf(onHealthy)), "the healthy node's breaker stayed closed");
        // Three batches reached both nodes; once the stalled node's breaker opened, batches were
        // refused before anything was sent, and the healthy node still counts on its own.
        assertEquals(4, store.increment(List.of(onHealthy)).current(0));
      } finally {
        sick.resume();
      }
    }
  }

  @Test
  void operationsThatCannotBeSentAreRecordedAsFailures() {
    MemcachedCounterStore s = store(Duration.ofSeconds(2));
    CounterUpdate u = new CounterUpdate("r", "unsent", 60_000, clock.millis() / 60_000, 1);
    assertEquals(1, s.increment(List.of(u)).current(0));
    s.client().shutdown();
    for (int i = 0; i < 3; i++) {
      assertThrows(StoreUnavailableException.class, () -> s.increment(List.of(u)));
    }
    assertTrue(
        s.breakerOpen(s.keyOf(u)), "three unsent batches are three failures: the breaker opened");
  }

  @Test
  void configurationIsCheckedAtOnce() {
    assertThrows(IllegalArgumentException.class, () -> MemcachedCounterStore.builder().build());
    assertThrows(
        IllegalArgumentException.class, () -> MemcachedCounterStore.builder().prefix("has space"));
    assertThrows(
        IllegalArgumentException.class,
        () -> MemcachedCounterStore.builder().operationTimeout(Duration.ZERO));
    assertNotEquals(Keys.part("a:b"), Keys.part("a_b"));
  }

  private static long items(MemcachedServer s) {
    return s.stat("curr_items");
  }

  /** Seconds left before {@code key} expires, from memcached's meta get. */
  private static long ttlOf(String key) {
    String line = server.command("mg " + key + " t", null).get(0);
    assertTrue(line.startsWith("HD"), line);
    for (String flag : line.split(" ", -1)) {
      if (flag.startsWith("t")) {
        return Long.parseLong(flag.substring(1));
      }
    }
    throw new AssertionError("no TTL in " + line);
  }
}
