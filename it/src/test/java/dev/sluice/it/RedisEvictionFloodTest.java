package dev.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.jaxrs.SluiceFeature;
import dev.sluice.store.redis.RedisCounterStore;
import dev.sluice.testkit.MemcachedServer;
import dev.sluice.testkit.RedisServer;
import dev.sluice.yaml.YamlRules;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * A client floods a Redis that evicts ({@code allkeys-lru}, {@code maxmemory} 500 kB above what it
 * uses empty) with new API keys, over real HTTP, to push out its own per-address counter and get
 * its quota again. Without a per-address backstop over every route the flood evicts counters, and
 * the store counts it ({@code sluice.store.evictions}). Behind the backstop, each refused request's
 * counters are given back, and a counter given back to zero is deleted: the flood keeps at most
 * about the backstop's limit of keys, and evicts nothing.
 */
class RedisEvictionFloodTest {

  private static final int FLOOD = 8_000;

  private static final String RULES =
      """
      rules:
        - { id: per-address, match: { prefix: /api/v1/report }, key: [ip], algorithm: fixed-window,
            tiers: [ { limit: 5, period: 1h } ] }
        - { id: per-key, match: { prefix: /api/v1/search }, key: [header:X-Api-Key],
            algorithm: fixed-window, tiers: [ { limit: 10, period: 1h } ] }
      """;

  private static final String BACKSTOP =
      """
        - { id: backstop, match: { prefix: / }, key: [ip], algorithm: fixed-window,
            tiers: [ { limit: 200, period: 1h } ] }
      """;

  /** What one run saw. */
  private record Run(int reportAdmitted, int floodAdmitted, long evictions, long perAddress) {}

  private static Run run(String rules) throws Exception {
    awayFromAnHoursEdge();
    try (RedisServer redis = RedisServer.start("--maxmemory-policy", "allkeys-lru")) {
      // Room for about 5,000 counters above what Redis uses empty: less than the flood needs.
      redis.cli(
          "config",
          "set",
          "maxmemory",
          Long.toString(field(redis, "memory", "used_memory") + 500_000));
      RedisCounterStore store =
          RedisCounterStore.builder()
              .uri(redis.uri())
              .operationTimeout(Duration.ofSeconds(2))
              .statsInterval(Duration.ofMillis(100))
              .build();
      try (App app =
          new App(
              SluiceFeature.builder(store).rules(YamlRules.parse(rules, "flood")).build(), store)) {
        int report = 0;
        for (int i = 0; i < 4; i++) {
          report += app.get("/api/v1/report").statusCode() == 200 ? 1 : 0;
        }
        int flood = 0;
        for (int i = 0; i < FLOOD; i++) {
          flood += app.get("/api/v1/search", "X-Api-Key", "flood-" + i).statusCode() == 200 ? 1 : 0;
        }
        for (int i = 0; i < 5; i++) {
          report += app.get("/api/v1/report").statusCode() == 200 ? 1 : 0;
        }
        long redisSays = field(redis, "stats", "evicted_keys");
        String node = redis.address();
        assertTrue(
            MemcachedServer.await(
                Duration.ofSeconds(5), () -> store.evictions().get(node) == redisSays),
            "the store saw every eviction: " + store.evictions() + " of " + redisSays);
        long perAddress =
            redis
                .cli("--scan", "--pattern", "sluice:*per-address*")
                .lines()
                .map(String::trim)
                .filter(k -> !k.isEmpty())
                .mapToLong(k -> Long.parseLong(redis.cli("get", k)))
                .sum();
        Run r = new Run(report, flood, store.evictions().get(node), perAddress);
        Report.line(
            String.format(
                "redis maxmemory 500 kB above its own use, allkeys-lru, %,d requests with new API keys from one address"
                    + " %s: %,d admitted, %,d keys evicted; per-address rule of 5: %d admitted",
                FLOOD,
                rules.contains("backstop") ? "behind a per-address backstop of 200" : "",
                r.floodAdmitted(),
                r.evictions(),
                r.reportAdmitted()));
        return r;
      }
    }
  }

  /** A number from a section of Redis's {@code INFO}. */
  private static long field(RedisServer redis, String section, String name) {
    return Long.parseLong(
        redis
            .cli("info", section)
            .lines()
            .filter(l -> l.startsWith(name + ":"))
            .findFirst()
            .orElseThrow()
            .substring(name.length() + 1)
            .trim());
  }

  /** Waits, at most 30 s, until this host's clock is not within 30 s of an hour's end. */
  private static void awayFromAnHoursEdge() throws InterruptedException {
    long intoHour = Instant.now().getEpochSecond() % 3600;
    if (intoHour > 3570) {
      Thread.sleep((3601 - intoHour) * 1000); // a window edge, not a condition: bounded, rare
    }
  }

  @Test
  void aFloodOfNewIdentitiesIsSeenEvictingCounters() throws Exception {
    Run r = run(RULES);
    assertEquals(FLOOD, r.floodAdmitted(), "each new key has its own quota");
    assertTrue(r.evictions() > 0, "the flood evicted counters and the store saw it: " + r);
  }

  @Test
  void behindAPerAddressBackstopTheFloodEvictsNothingAndTheLimitHolds() throws Exception {
    Run r = run(RULES + BACKSTOP);
    assertTrue(r.reportAdmitted() <= 5, "the per-address limit holds: " + r);
    assertEquals(r.reportAdmitted(), r.perAddress(), "redis still holds the address's count: " + r);
    assertTrue(r.floodAdmitted() <= 200, "the backstop bounds the flood: " + r);
    assertEquals(0, r.evictions(), "nothing was evicted: " + r);
  }
}
