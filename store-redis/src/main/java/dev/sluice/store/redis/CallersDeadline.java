package dev.sluice.store.redis;

import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.protocol.CommandArgsAccessor;
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.protocol.RedisCommand;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Lettuce's timeout for every command but a decision's {@code count.lua}: its caller waits within
 * its own deadline, far shorter ({@link Counting}), and gives up on its own, so a timer entry set
 * and cancelled on every decision would only cost CPU.
 */
final class CallersDeadline extends TimeoutOptions.TimeoutSource {
  private final long nanos;

  CallersDeadline(Duration timeout) {
    this.nanos = timeout.toNanos();
  }

  @Override
  public long getTimeout(RedisCommand<?, ?, ?> command) {
    return command.getType() == CommandType.EVALSHA
            && Script.COUNT.sha.equals(CommandArgsAccessor.getFirstString(command.getArgs()))
        ? 0
        : nanos;
  }

  @Override
  public TimeUnit getTimeUnit() {
    return TimeUnit.NANOSECONDS;
  }
}
