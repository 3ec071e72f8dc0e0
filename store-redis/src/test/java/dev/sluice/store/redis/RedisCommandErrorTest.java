package dev.sluice.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.spi.CounterUpdate;
import dev.sluice.testkit.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

/**
 * A command Redis refuses inside the counting script (an ACL user without {@code incrby}, {@code
 * pexpire} or {@code decrby}) is a store failure carrying Redis's own error: the limiter then
 * follows {@code onStoreFailure}. It never saturates a counter, and no key the store writes is left
 * without an expiry.
 */
class RedisCommandErrorTest {

  private static final long W = System.currentTimeMillis() / 1_000;

  private static List<CounterUpdate> window(String key) {
    return List.of(new CounterUpdate("r", key, 1_000, W, 1));
  }

  /** A server whose user {@code limiter} may run the store's scripts and every command but one. */
  private static RedisServer withoutCommand(String command) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "--user",
                "limiter",
                "on",
                ">s3cret",
                "~sluice:*",
                "resetchannels",
                "-@all",
                "+@scripting",
                "+@connection"));
    for (String c :
        List.of(
            "get", "set", "incrby", "decrby", "del", "exists", "pexpire", "persist", "hget",
            "hmget", "hset", "time")) {
      if (!c.equals(command)) {
        args.add("+" + c);
      }
    }
    return RedisServer.start(args.toArray(new String[0]));
  }

  private static RedisCounterStore store(RedisServer server) {
    return RedisCounterStore.builder()
        .uri(server.uri())
        .credentials("limiter", "s3cret")
        .operationTimeout(Duration.ofSeconds(2))
        .build();
  }

  /** Every key the store wrote, with its time to live in ms (the default user sees them all). */
  private static void assertEveryKeyExpires(RedisServer server) {
    String keys = server.cli("--scan", "--pattern", "sluice:*");
    assertTrue(!keys.isBlank(), "the store wrote keys");
    for (String key : keys.lines().map(String::trim).filter(k -> !k.isEmpty()).toList()) {
      long ttl = Long.parseLong(server.cli("pttl", key));
      assertTrue(ttl > 0, key + " has no expiry: pttl " + ttl);
      String value = server.cli("get", key);
      assertTrue(Long.parseLong(value) < 1_000, key + " holds " + value);
    }
  }

  @Test
  void anIncrementRedisRefusesIsAStoreFailureNamingTheServersError() {
    try (RedisServer server = withoutCommand("incrby");
        RedisCounterStore store = store(server)) {
      // The first request creates the window with its expiry; the next ones need INCRBY.
      store.increment(window("a"));
      for (int i = 0; i < 3; i++) {
        RuntimeException e =
            assertThrows(RuntimeException.class, () -> store.increment(window("a")));
        assertTrue(String.valueOf(e.getMessage()).contains("INCRBY refused: "), e.toString());
        assertTrue(String.valueOf(e.getMessage()).contains("can't run"), e.toString());
      }
      assertEveryKeyExpires(server);
    }
  }

  @Test
  void aUserWithoutPexpireStillWritesEveryWindowWithItsExpiry() {
    try (RedisServer server = withoutCommand("pexpire");
        RedisCounterStore store = store(server)) {
      assertEquals(1, store.increment(window("a")).current(0));
      assertEquals(2, store.increment(window("a")).current(0));
      assertEquals(1, store.increment(window("b")).current(0));
      assertEveryKeyExpires(server);
    }
  }

  @Test
  void aRefundRedisRefusesLeavesTheCountAsItWas() {
    try (RedisServer server = withoutCommand("decrby");
        RedisCounterStore store = store(server)) {
      store.increment(window("a"));
      store.increment(window("a"));
      ExecutionException e =
          assertThrows(ExecutionException.class, () -> store.decrementAsync(window("a")).get());
      assertTrue(String.valueOf(e.getCause()).contains("DECRBY refused: "), e.toString());
      String key = server.cli("--scan", "--pattern", "sluice:*");
      assertEquals("2", server.cli("get", key.trim()), "a refused refund takes nothing");
      assertEveryKeyExpires(server);
    }
  }
}
