package dev.sluice.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.spi.CounterUpdate;
import dev.sluice.spi.Counts;
import dev.sluice.testkit.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Redis dying, stalling, coming back, and not being there at all: a decision fails fast (the
 * limiter then fails open or closed), and counting resumes within tens of milliseconds of Redis
 * answering again, without a restart of the instance.
 */
class RedisFailureTest {

  private static final long W = System.currentTimeMillis() / 1_000;

  private static List<CounterUpdate> one() {
    return List.of(new CounterUpdate("r", "k", 1_000, W, 1));
  }

  /** Milliseconds until an increment succeeds, trying every millisecond, at most {@code max}. */
  private static long untilCounted(RedisCounterStore store, Duration max) {
    long t0 = System.nanoTime();
    long deadline = t0 + max.toNanos();
    while (System.nanoTime() < deadline) {
      try {
        store.increment(one());
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      } catch (RuntimeException e) {
        try {
          Thread.sleep(1); // a condition wait with a deadline
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException(ie);
        }
      }
    }
    throw new AssertionError("not counted within " + max);
  }

  @Test
  void aRestartedRedisIsCountedAgainWithinTensOfMilliseconds() {
    try (RedisServer server = RedisServer.start();
        RedisCounterStore store =
            RedisCounterStore.builder()
                .uri(server.uri())
                .operationTimeout(Duration.ofMillis(50))
                .build()) {
      store.increment(one());
      server.kill();
      long t0 = System.nanoTime();
      assertThrows(RuntimeException.class, () -> store.increment(one()));
      long failMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      assertTrue(failMs < 200, "a dead redis failed a decision after " + failMs + " ms");
      server.restart();
      long ms = untilCounted(store, Duration.ofSeconds(5));
      System.out.println("counted again " + ms + " ms after redis-server accepted connections");
      assertTrue(ms < 200, "counted again after " + ms + " ms");
      // An empty server after the restart: the count starts again.
      assertEquals(Counts.of(2, 0), store.increment(one()));
    }
  }

  @Test
  void aStalledRedisOpensTheBreakerAndItsProbeClosesIt() {
    try (RedisServer server = RedisServer.start();
        RedisCounterStore store =
            RedisCounterStore.builder()
                .uri(server.uri())
                .operationTimeout(Duration.ofMillis(20))
                .circuitBreaker(3, Duration.ofMillis(200))
                .build()) {
      store.increment(one());
      server.pause();
      try {
        for (int i = 0; i < 3; i++) {
          assertThrows(RuntimeException.class, () -> store.increment(one()));
        }
        long t0 = System.nanoTime();
        RuntimeException open = assertThrows(RuntimeException.class, () -> store.increment(one()));
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertTrue(open.getMessage().contains("circuit open"), open.toString());
        assertTrue(ms < 10, "an open breaker answered after " + ms + " ms");
      } finally {
        server.resume();
      }
      untilCounted(store, Duration.ofSeconds(5));
    }
  }

  /**
   * A stalled Redis opens the breaker; it is tried again as soon as Redis answers, not after the
   * breaker's delay (5 s here): instances that share it count in it again together.
   */
  @Test
  void aStalledRedisIsTriedAgainAsSoonAsItAnswers() {
    try (RedisServer server = RedisServer.start();
        RedisCounterStore store =
            RedisCounterStore.builder()
                .uri(server.uri())
                .operationTimeout(Duration.ofMillis(20))
                .circuitBreaker(3, Duration.ofSeconds(5))
                .build()) {
      store.increment(one());
      for (int round = 0; round < 3; round++) {
        server.pause();
        try {
          for (int i = 0; i < 3; i++) {
            assertThrows(RuntimeException.class, () -> store.increment(one()));
          }
          RuntimeException open =
              assertThrows(RuntimeException.class, () -> store.increment(one()));
          assertTrue(open.getMessage().contains("circuit open"), open.toString());
        } finally {
          server.resume();
        }
        long ms = untilCounted(store, Duration.ofSeconds(10));
        System.out.println("stall " + round + ": counted again " + ms + " ms after it ended");
        assertTrue(ms < 600, "counted again after " + ms + " ms");
      }
    }
  }

  @Test
  void aRedisNotThereAtStartIsCountedOnceItIs() {
    int port = RedisServer.freePort();
    long t0 = System.nanoTime();
    try (RedisCounterStore store =
        RedisCounterStore.builder()
            .uri("127.0.0.1:" + port)
            .operationTimeout(Duration.ofMillis(50))
            .connectTimeout(Duration.ofMillis(300))
            .build()) {
      long buildMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      assertTrue(buildMs < 3_000, "built in " + buildMs + " ms");
      assertThrows(StoreUnavailableException.class, () -> store.increment(one()));
      try (RedisServer late = RedisServer.startOn(port)) {
        untilCounted(store, Duration.ofSeconds(5));
        assertTrue(store.clock().orElseThrow().errorMillis() >= -1);
      }
    }
  }
}
