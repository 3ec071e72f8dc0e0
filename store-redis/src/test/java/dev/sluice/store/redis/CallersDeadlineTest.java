package dev.sluice.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.Command;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class CallersDeadlineTest {

  private final Connection.CallersDeadline source =
      new Connection.CallersDeadline(Duration.ofSeconds(1));

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
}
