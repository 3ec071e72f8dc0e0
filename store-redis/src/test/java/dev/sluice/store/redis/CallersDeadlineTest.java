package dev.sluice.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.testkit.RedisServer;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.Command;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class CallersDeadlineTest {

  private final CallersDeadline source = new CallersDeadline(Duration.ofSeconds(1));

  private static Command<String, String, String> script(CommandType type, String shaOrBody) {
    CommandArgs<String, String> args =
        new CommandArgs<>(StringCodec.UTF8).add(shaOrBody).add(1).addKey("k").addValue("1");
    return new Command<>(type, new StatusOutput<>(StringCodec.UTF8), args);
  }

  /**
   * A decision's count script waits on its caller's deadline alone; every other command (a probe's
   * TIME, a shared value, a refund, the count script sent whole after NOSCRIPT) keeps Lettuce's.
   */
  @Test
  void onlyTheDecisionsCountScriptIsLeftToItsCaller() {
    long second = TimeUnit.SECONDS.toNanos(1);
    assertEquals(TimeUnit.NANOSECONDS, source.getTimeUnit());
    assertEquals(0, source.getTimeout(script(CommandType.EVALSHA, Script.COUNT.sha)));
    for (Script other : Script.ALL) {
      if (other != Script.COUNT) {
        assertEquals(second, source.getTimeout(script(CommandType.EVALSHA, other.sha)), other.sha);
      }
    }
    assertEquals(second, source.getTimeout(script(CommandType.EVAL, Script.COUNT.body)));
    assertEquals(
        second,
        source.getTimeout(
            new Command<>(CommandType.PING, new StatusOutput<String, String>(StringCodec.UTF8))));
  }

  /**
   * On a stalled Redis, Lettuce times out a {@code TIME} after its command timeout (1 s here),
   * while a decision's count script sent before it is still pending, left to its caller's deadline;
   * once Redis answers again the script's answer arrives.
   */
  @Test
  void aStalledRedisTimesOutOtherCommandsButLeavesTheCountScriptToItsCaller() throws Exception {
    try (RedisServer stalled = RedisServer.start();
        RedisCounterStore store =
            RedisCounterStore.builder()
                .uri(stalled.uri())
                .connectTimeout(Duration.ofMillis(500))
                .build()) {
      Connection connection = store.connection;
      String[] keys = {"t:{k}:r:1000:1"};
      String[] args = {"c", "1", "3000", "0", "9223372036854775807"};
      List<?> before =
          Script.COUNT
              .<List<?>>run(connection.commands(), ScriptOutputType.MULTI, keys, args)
              .get(5, TimeUnit.SECONDS);
      assertEquals(1L, before.get(0));
      stalled.pause();
      CompletableFuture<List<?>> count;
      try {
        count = Script.COUNT.send(connection.commands(), ScriptOutputType.MULTI, keys, args);
        CompletableFuture<Object> time =
            Script.TIME.run(connection.commands(), ScriptOutputType.MULTI, new String[0]);
        ExecutionException e =
            assertThrows(ExecutionException.class, () -> time.get(5, TimeUnit.SECONDS));
        assertInstanceOf(RedisCommandTimeoutException.class, e.getCause(), e.toString());
        assertFalse(count.isDone(), "the count script timed out in Lettuce: " + count);
      } finally {
        stalled.resume();
      }
      assertEquals(2L, count.get(5, TimeUnit.SECONDS).get(0));
    }
  }

  /**
   * A server that lost the count script ({@code NOSCRIPT}) gets it whole only while the decision is
   * in time: sent after its deadline it would count a decision reported as failed.
   */
  @Test
  void aLostCountScriptIsSentWholeOnlyBeforeTheDecisionsDeadline() throws Exception {
    try (RedisServer server = RedisServer.start();
        RedisCounterStore store = RedisCounterStore.builder().uri(server.uri()).build()) {
      var redis = store.connection.commands();
      String[] keys = {"t:{k}:r:1000:2"};
      String[] args = {"c", "1", "3000", "0", "9223372036854775807"};
      redis.scriptFlush().get(5, TimeUnit.SECONDS);
      CompletableFuture<List<?>> late =
          Script.COUNT.runBefore(System.nanoTime() - 1, redis, ScriptOutputType.MULTI, keys, args);
      ExecutionException e =
          assertThrows(ExecutionException.class, () -> late.get(5, TimeUnit.SECONDS));
      assertTrue(Script.noScript(e.getCause()), e.toString());
      List<?> inTime =
          Script.COUNT
              .<List<?>>runBefore(
                  System.nanoTime() + TimeUnit.SECONDS.toNanos(5),
                  redis,
                  ScriptOutputType.MULTI,
                  keys,
                  args)
              .get(5, TimeUnit.SECONDS);
      assertEquals(1L, inTime.get(0), "the late call was counted");
    }
  }
}
