package dev.sluice.store.memcached;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.RateLimiter;
import dev.sluice.TestSettings;
import dev.sluice.engine.Engine;
import dev.sluice.testkit.Memcached;
import dev.sluice.testkit.MemcachedServer;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import org.junit.jupiter.api.Test;

/**
 * This host's clock stepped 30 s forward mid-run, as NTP steps a clock it finds off, under a
 * limiter on a real memcached: for the 3 s after the step (the watch of memcached's ticks reads
 * several of them) the limiter's clock stays within a few milliseconds of where it was, and a fixed
 * window of 5 per 30 s admits 5 across the step, not 5 more in the window the step lands in.
 */
@Memcached
class MemcachedClockStepTest {

  /** The system clock plus a step that moves when told to. */
  static final class Stepped implements InstantSource {
    volatile long stepMillis;

    @Override
    public Instant instant() {
      return Instant.ofEpochMilli(millis());
    }

    @Override
    public long millis() {
      return System.currentTimeMillis() + stepMillis;
    }
  }

  @Test
  void aStepOfTheHostsClockMovesNeitherTheLimitersClockNorItsWindow(MemcachedServer server)
      throws InterruptedException {
    for (int attempt = 0; ; attempt++) {
      Stepped host = new Stepped();
      try (MemcachedCounterStore store =
          MemcachedCounterStore.builder()
              .servers(server.address())
              .prefix("step" + attempt)
              .clock(host)
              .operationTimeout(Duration.ofSeconds(1))
              .build()) {
        long offset = store.clock().orElseThrow().offsetMillis();
        RateLimiter limiter =
            TestSettings.hostClock(RateLimiter.fixedWindow(store), host)
                .denyCacheSize(0)
                .tier(5, Duration.ofSeconds(30))
                .build();
        // The clock limiters on this store decide on.
        InstantSource decides =
            Engine.of(TestSettings.hostClock(RateLimiter.fixedWindow(store), host)).clock();
        long startTrue = System.currentTimeMillis() + offset;
        int admitted = 0;
        for (int i = 0; i < 5; i++) {
          admitted += limiter.tryAcquire("client").allowed() ? 1 : 0;
        }
        long before = decides.millis() - System.currentTimeMillis();
        host.stepMillis = 30_000;
        long worst = 0;
        long end = System.nanoTime() + 3_000_000_000L;
        while (System.nanoTime() < end) {
          long moved = decides.millis() - System.currentTimeMillis() - before;
          worst = Math.abs(moved) > Math.abs(worst) ? moved : worst;
          Thread.sleep(20);
        }
        assertTrue(
            Math.abs(worst) <= 50,
            "the limiter's clock moved up to " + worst + " ms in the 3 s after the host's step");
        for (int i = 0; i < 5; i++) {
          admitted += limiter.tryAcquire("client").allowed() ? 1 : 0;
        }
        long endTrue = System.currentTimeMillis() + offset;
        if (Math.floorDiv(startTrue, 30_000) == Math.floorDiv(endTrue, 30_000)) {
          assertEquals(5, admitted, "admitted in one window of 5, across the step");
          return;
        }
        // The run crossed a true window's edge: again, in the next window (it cannot cross two).
        assertTrue(attempt == 0, "two runs of 4 s each crossed a 30 s window's edge");
      }
    }
  }
}
