package dev.sluice.store.redis;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.spi.CounterBatch;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterStoreProvider;
import dev.sluice.spi.CounterUpdate;
import dev.sluice.spi.Counts;
import dev.sluice.spi.StoreClock;
import dev.sluice.spi.StoreTimeoutException;
import dev.sluice.testkit.Redis;
import dev.sluice.testkit.RedisServer;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** What the Redis store adds to the contract: round trips, 64-bit values, Redis's clock, keys. */
@Redis
class RedisCounterStoreTest {

  private static final long W = System.currentTimeMillis() / 1_000;
  private static RedisServer server;

  @BeforeAll
  static void startRedis(RedisServer started) {
    server = started;
  }

  private static RedisCounterStore store(String prefix) {
    return RedisCounterStore.builder()
        .uri(server.uri())
        .prefix(prefix)
        .operationTimeout(Duration.ofSeconds(2))
        .build();
  }

  /** A store that takes running counters' floors as given: they are not times here. */
  private static RedisCounterStore floorsAsGiven(String prefix) {
    return RedisCounterStore.builder()
        .uri(server.uri())
        .prefix(prefix)
        .operationTimeout(Duration.ofSeconds(2))
        .storeClock(false)
        .build();
  }

  /** How many scripts Redis has run, by SHA or whole. */
  static long scriptsRun(RedisServer s) {
    String stats = s.cli("INFO", "commandstats");
    long n = 0;
    Matcher m = Pattern.compile("cmdstat_(evalsha|eval):calls=(\\d+)").matcher(stats);
    while (m.find()) {
      n += Long.parseLong(m.group(2));
    }
    return n;
  }

  @Test
  void aDecisionIsOneScriptWhateverTheNumberOfCounters() {
    try (RedisCounterStore store = store("trips")) {
      List<CounterUpdate> decision =
          List.of(
              new CounterUpdate("per-key", "k1", 1_000, W, 1),
              new CounterUpdate("per-key", "k1", 60_000, W / 60, 1),
              new CounterUpdate("customer", "c1", 1_000, W, 1),
              new CounterUpdate("bucket", "k1", 1_000, W, 10, 5_000));
      store.increment(decision); // the first may be NOSCRIPT + EVAL
      long before = scriptsRun(server);
      for (int i = 0; i < 10; i++) {
        store.increment(decision);
      }
      assertEquals(10, scriptsRun(server) - before, "one script per decision");
    }
  }

  @Test
  void aTokenBucketsArrivalTimeInNanosecondsIsAddedExactly() throws Exception {
    // Floors are nanoseconds since the epoch, past 2^53 where Lua's doubles lose units.
    long floor = 1_764_000_000_123_456_789L;
    try (RedisCounterStore store = floorsAsGiven("nanos")) {
      Counts r = store.increment(List.of(new CounterUpdate("b", "k", 1_000, W, 7, floor)));
      assertEquals(Counts.of(floor + 7, 0), r);
      r = store.increment(List.of(new CounterUpdate("b", "k", 1_000, W, 1, floor)));
      assertEquals(Counts.of(floor + 8, 0), r);
      r = store.increment(List.of(new CounterUpdate("b", "k", 1_000, W, 999_999_999, floor + 3)));
      assertEquals(Counts.of(floor + 8 + 999_999_999, 0), r, "a carry across the halves");
      store
          .decrementAsync(List.of(new CounterUpdate("b", "k", 1_000, W, 5, floor)))
          .get(5, TimeUnit.SECONDS);
      r = store.increment(List.of(new CounterUpdate("b", "k", 1_000, W, 1, floor)));
      assertEquals(Counts.of(floor + 1_000_000_003, 0), r, "refunded");
    }
  }

  @Test
  void aRunningCounterSaturatesAtTheLargestLong() {
    try (RedisCounterStore store = floorsAsGiven("satrun")) {
      long floor = Long.MAX_VALUE - 3;
      Counts r = store.increment(List.of(new CounterUpdate("b", "k", 1_000, W, 10, floor)));
      assertEquals(Counts.of(Long.MAX_VALUE, 0), r);
    }
  }

  @Test
  void aScriptRedisForgotIsSentAgain() {
    try (RedisCounterStore store = store("flush")) {
      store.increment(List.of(new CounterUpdate("r", "k", 1_000, W, 1)));
      assertEquals("OK", server.cli("SCRIPT", "FLUSH"));
      Counts r = store.increment(List.of(new CounterUpdate("r", "k", 1_000, W, 1)));
      assertEquals(Counts.of(2, 0), r);
    }
  }

  @Test
  void windowsExpireAfterTwoPeriodsAndSlack() {
    try (RedisCounterStore store = store("ttl")) {
      CounterUpdate u = new CounterUpdate("r", "k", 5_000, W / 5, 1);
      store.increment(List.of(u));
      long ttl = Long.parseLong(server.cli("PTTL", store.keyOf(u)));
      assertTrue(ttl > 10_000 && ttl <= 20_000, "ttl " + ttl);
      store.increment(List.of(u));
      assertTrue(Long.parseLong(server.cli("PTTL", store.keyOf(u))) <= ttl, "not renewed");
    }
  }

  @Test
  void oneClientsCountersShareAHashSlotAndCallerDataNeverMovesIt() {
    try (RedisCounterStore store = store("slots")) {
      String a = store.keyOf(new CounterUpdate("per-key", "k1", 1_000, W, 1));
      String b = store.keyOf(new CounterUpdate("other", "k1", 60_000, W, 1, 10));
      assertEquals(tag(a), tag(b));
      assertEquals("k1", tag(a));
      String hostile = store.keyOf(new CounterUpdate("r", "}{x}", 1_000, W, 1));
      assertTrue(tag(hostile).startsWith("#"), hostile);
    }
  }

  private static String tag(String key) {
    return key.substring(key.indexOf('{') + 1, key.indexOf('}'));
  }

  @Test
  void theStoresClockIsRedisTime() {
    Duration skew = Duration.ofMinutes(-7);
    InstantSource behind =
        new InstantSource() {
          @Override
          public Instant instant() {
            return Instant.now().plus(skew);
          }
        };
    try (RedisCounterStore store =
        RedisCounterStore.builder().uri(server.uri()).prefix("clock").clock(behind).build()) {
      StoreClock c = store.clock().orElseThrow();
      assertTrue(c.errorMillis() >= 0, "measured when built");
      assertTrue(c.errorMillis() <= 5, "error " + c.errorMillis());
      assertTrue(
          Math.abs(c.offsetMillis() - 7 * 60_000) <= 5 + c.errorMillis(),
          "offset " + c.offsetMillis());
    }
  }

  @Test
  void theProviderMakesAStoreFromTextSettings() {
    try (CounterStore s =
        CounterStoreProvider.create(
            "redis",
            Map.of("uri", server.address(), "prefix", "provided", "operationTimeout", "1s"),
            getClass().getClassLoader())) {
      assertEquals(Counts.of(1, 0), s.increment(List.of(new CounterUpdate("r", "k", 1_000, W, 1))));
    }
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> CounterStoreProvider.create("redis", Map.of(), getClass().getClassLoader()));
    assertTrue(e.getMessage().startsWith("uri:"), e.getMessage());
  }

  @Test
  void anAclUserIsRequiredWhenRedisAsksForOne() {
    try (RedisServer secured =
        RedisServer.start(
            "--requirepass", "admin-secret", "--user", "sluice", "on", ">s3cret", "~*", "+@all")) {
      try (RedisCounterStore store =
          RedisCounterStore.builder()
              .uri(secured.uri())
              .credentials("sluice", "s3cret")
              .operationTimeout(Duration.ofSeconds(2))
              .build()) {
        assertEquals(
            Counts.of(1, 0), store.increment(List.of(new CounterUpdate("r", "k", 1_000, W, 1))));
      }
      try (RedisCounterStore store =
          RedisCounterStore.builder()
              .uri(secured.uri())
              .connectTimeout(Duration.ofMillis(500))
              .storeClock(false)
              .build()) {
        assertThrows(
            RuntimeException.class,
            () -> store.increment(List.of(new CounterUpdate("r", "k", 1_000, W, 1))));
      }
    }
  }

  @Test
  void aTimeoutSaysTheChangeMayStillBeApplied() {
    try (RedisServer stalled = RedisServer.start();
        RedisCounterStore store =
            RedisCounterStore.builder()
                .uri(stalled.uri())
                .operationTimeout(Duration.ofMillis(50))
                .build()) {
      store.increment(List.of(new CounterUpdate("r", "k", 1_000, W, 1)));
      stalled.pause();
      try {
        long t0 = System.nanoTime();
        RuntimeException e =
            assertThrows(
                RuntimeException.class,
                () -> store.increment(List.of(new CounterUpdate("r", "k", 1_000, W, 1))));
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertTrue(StoreTimeoutException.in(e), e.toString());
        assertTrue(ms < 500, "gave up after " + ms + " ms");
      } finally {
        stalled.resume();
      }
    }
  }

  /**
   * {@code updates} as a batch the store reads by index, its counts written into {@code pairs}: it
   * fails if the store asks for the batch as a list of updates or a counter as an update.
   */
  private static CounterBatch indexed(long[] pairs, CounterUpdate... updates) {
    CounterBatch batch = CounterBatch.of(List.of(updates), pairs);
    return (CounterBatch)
        Proxy.newProxyInstance(
            CounterBatch.class.getClassLoader(),
            new Class<?>[] {CounterBatch.class},
            (proxy, method, args) -> {
              if (method.getName().equals("updates") || method.getName().equals("update")) {
                throw new AssertionError("the batch was copied: " + method.getName());
              }
              try {
                return method.invoke(batch, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
            });
  }

  @Test
  void aBatchIsCountedInPlaceWithoutCopyingItsCounters() throws Exception {
    long floor = 1_764_000_000_123_456_789L;
    try (RedisCounterStore store = floorsAsGiven("inplace")) {
      store.increment(List.of(new CounterUpdate("r", "k", 1_000, W - 1, 4)));
      long[] sync = new long[4];
      store.increment(
          indexed(
              sync,
              new CounterUpdate("r", "k", 1_000, W, 1),
              new CounterUpdate("b", "k", 1_000, W, 7, floor)));
      assertArrayEquals(new long[] {1, 4, floor + 7, 0}, sync);
      long[] async = new long[2];
      store
          .incrementAsync(indexed(async, new CounterUpdate("r", "k", 1_000, W, 2)))
          .get(5, TimeUnit.SECONDS);
      assertArrayEquals(new long[] {3, 4}, async, "the previous count remembered");
    }
  }
}
