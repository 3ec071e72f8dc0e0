package dev.sluice.store.redis;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.HostClockStep;
import dev.sluice.testkit.Redis;
import dev.sluice.testkit.RedisServer;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * This host's clock stepped 30 s forward mid-run, as NTP steps a clock it finds off, under a
 * limiter on a real Redis: the limiter's clock does not move, and a fixed window of 5 per 30 s
 * admits 5 across the step, not 5 more in the window the step lands in.
 */
@Redis
class RedisClockStepTest {

  @Test
  void aStepOfTheHostsClockMovesNeitherTheLimitersClockNorItsWindow(RedisServer server)
      throws Exception {
    HostClockStep.admitsOneWindowAcrossTheStep(
        (host, prefix) ->
            RedisCounterStore.builder()
                .uri(server.uri())
                .prefix(prefix)
                .clock(host)
                .operationTimeout(Duration.ofSeconds(2))
                .build(),
        moved -> {
          long after = moved.getAsLong();
          assertTrue(
              Math.abs(after) <= 20,
              "the limiter's clock moved " + after + " ms with the host's step");
        });
  }
}
