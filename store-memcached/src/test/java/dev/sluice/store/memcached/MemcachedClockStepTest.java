package dev.sluice.store.memcached;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.HostClockStep;
import dev.sluice.testkit.Memcached;
import dev.sluice.testkit.MemcachedServer;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * This host's clock stepped 30 s forward mid-run, as NTP steps a clock it finds off, under a
 * limiter on a real memcached: for the 3 s after the step (the watch of memcached's ticks reads
 * several of them) the limiter's clock stays within a few milliseconds of where it was, and a fixed
 * window of 5 per 30 s admits 5 across the step, not 5 more in the window the step lands in.
 */
@Memcached
class MemcachedClockStepTest {

  @Test
  void aStepOfTheHostsClockMovesNeitherTheLimitersClockNorItsWindow(MemcachedServer server)
      throws Exception {
    HostClockStep.admitsOneWindowAcrossTheStep(
        (host, prefix) ->
            MemcachedCounterStore.builder()
                .servers(server.address())
                .prefix(prefix)
                .clock(host)
                .operationTimeout(Duration.ofSeconds(1))
                .build(),
        moved -> {
          long worst = 0;
          long end = System.nanoTime() + 3_000_000_000L;
          while (System.nanoTime() < end) {
            long now = moved.getAsLong();
            worst = Math.abs(now) > Math.abs(worst) ? now : worst;
            Thread.sleep(20);
          }
          assertTrue(
              Math.abs(worst) <= 50,
              "the limiter's clock moved up to " + worst + " ms in the 3 s after the host's step");
        });
  }
}
