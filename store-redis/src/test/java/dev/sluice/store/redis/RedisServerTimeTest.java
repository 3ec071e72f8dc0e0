package dev.sluice.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.spi.CounterUpdate;
import dev.sluice.testkit.Redis;
import dev.sluice.testkit.RedisServer;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A token bucket's time is Redis's, read inside the script: two instances whose clocks are seconds
 * apart share one bucket exactly, and each sees the bucket in its own clock's frame.
 */
@Redis
class RedisServerTimeTest {

  /** 2020-01-01T00:00:00Z, where a token bucket's arrival time counts from (core's TokenBucket). */
  private static final long EPOCH_MILLIS = 1_577_836_800_000L;

  /** One token a second; a burst of 10 fills in ten seconds. */
  private static final long INTERVAL = 1_000_000_000L;

  private static final long BURST = 10;

  private static RedisServer server;

  @BeforeAll
  static void startRedis(RedisServer started) {
    server = started;
  }

  /** An instance: its host clock, and a store that decides on Redis's clock. */
  private record Instance(InstantSource clock, RedisCounterStore store) {

    /** One token, as core's token bucket asks for it: floor now, ceiling a burst later. */
    long take(String bucket) {
      long floor = (clock.millis() - EPOCH_MILLIS) * 1_000_000;
      long ceiling = floor + BURST * INTERVAL;
      CounterUpdate u = new CounterUpdate("tb", bucket, 10_000, 0, INTERVAL, floor, false, ceiling);
      return store.increment(List.of(u)).current(0) - ceiling;
    }
  }

  private static Instance instance(String prefix, Duration ahead) {
    InstantSource clock = () -> Instant.now().plus(ahead);
    return new Instance(
        clock,
        RedisCounterStore.builder()
            .uri(server.uri())
            .prefix(prefix)
            .clock(clock)
            .operationTimeout(Duration.ofSeconds(2))
            .build());
  }

  @Test
  void twoInstancesAMinuteApartShareOneBucketExactly() {
    Instance behind = instance("skew", Duration.ZERO);
    Instance ahead = instance("skew", Duration.ofMinutes(1));
    try (RedisCounterStore a = behind.store();
        RedisCounterStore b = ahead.store()) {
      int admitted = 0;
      for (int i = 0; i < 10; i++) {
        admitted += behind.take("client") <= 0 ? 1 : 0;
      }
      assertEquals(10, admitted, "a full bucket gives its burst");
      // The instance a minute ahead finds the bucket as empty as it is: on its own clock it would
      // see it full again and admit ten more.
      long over = ahead.take("client");
      assertTrue(over > 0, "admitted from an empty bucket (" + over + " ns within the ceiling)");
      // Reported in its own frame: one token past its ceiling, less the time since the bucket
      // emptied (under the one second a token takes, even on a loaded machine).
      assertTrue(over <= INTERVAL, "one token past the ceiling, not " + over + " ns");
      // And the instance behind finds it empty too.
      assertTrue(behind.take("client") > 0, "the bucket is shared");
    }
  }

  @Test
  void aNewBucketGivesItsBurstOnAClockAMinuteBehind() {
    Instance behind = instance("fill", Duration.ofMinutes(-1));
    try (RedisCounterStore a = behind.store()) {
      // A new bucket starts full on any clock: ten tokens, then none.
      int admitted = 0;
      for (int i = 0; i < 11; i++) {
        admitted += behind.take("client") <= 0 ? 1 : 0;
      }
      assertEquals(10, admitted);
    }
  }

  @Test
  void aCallerAheadOfRedisGetsASaturatedCountNotAnOverflow() {
    Instance ahead = instance("huge", Duration.ofSeconds(2));
    try (RedisCounterStore a = ahead.store()) {
      long floor = (ahead.clock().millis() - EPOCH_MILLIS) * 1_000_000;
      // A delta that saturates: moved back to the caller's frame (2 s ahead) it must stay a long.
      CounterUpdate u =
          new CounterUpdate(
              "tb", "k", 10_000, 0, Long.MAX_VALUE - 1_000, floor, false, Long.MAX_VALUE);
      assertEquals(Long.MAX_VALUE, a.increment(List.of(u)).current(0));
    }
  }
}
