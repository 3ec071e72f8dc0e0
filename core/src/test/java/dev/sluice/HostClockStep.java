package dev.sluice;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.engine.Engine;
import dev.sluice.spi.CounterStore;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.function.LongSupplier;

/**
 * This host's clock stepped 30 s forward mid-run, as NTP steps a clock it finds off, under a fixed
 * window of 5 per 30 s on a real store that keeps its own clock: for the tests of the stores that
 * measure one.
 */
public final class HostClockStep {

  private HostClockStep() {}

  /** A store on {@code host} as this host's clock, counting under {@code prefix}. */
  public interface Store {
    CounterStore on(InstantSource host, String prefix);
  }

  /** What a test checks of the limiter's clock once the host's clock has stepped. */
  public interface AfterStep {
    /**
     * {@code moved} reads how far the clock limiters on the store decide on has moved, against the
     * system clock, since just before the step.
     */
    void check(LongSupplier moved) throws InterruptedException;
  }

  /** The system clock plus a step that moves when told to. */
  private static final class Stepped implements InstantSource {
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

  /**
   * Spends 5 of a fixed window of 5 per 30 s on {@code store}, steps the host's clock 30 s forward,
   * runs {@code afterStep}, and asks 5 more: the window admits 5 across the step, not 5 more in the
   * window the step lands in. A run that crossed a true window's edge is made again, once.
   */
  public static void admitsOneWindowAcrossTheStep(Store store, AfterStep afterStep)
      throws Exception {
    for (int attempt = 0; ; attempt++) {
      Stepped host = new Stepped();
      try (CounterStore counters = store.on(host, "step" + attempt)) {
        long offset = counters.clock().orElseThrow().offsetMillis();
        RateLimiter limiter =
            TestSettings.hostClock(RateLimiter.fixedWindow(counters), host)
                .denyCacheSize(0)
                .tier(5, Duration.ofSeconds(30))
                .build();
        // The clock limiters on this store decide on.
        InstantSource decides =
            Engine.of(TestSettings.hostClock(RateLimiter.fixedWindow(counters), host)).clock();
        long startTrue = System.currentTimeMillis() + offset;
        int admitted = 0;
        for (int i = 0; i < 5; i++) {
          admitted += limiter.tryAcquire("client").allowed() ? 1 : 0;
        }
        long before = decides.millis() - System.currentTimeMillis();
        host.stepMillis = 30_000;
        afterStep.check(() -> decides.millis() - System.currentTimeMillis() - before);
        for (int i = 0; i < 5; i++) {
          admitted += limiter.tryAcquire("client").allowed() ? 1 : 0;
        }
        long endTrue = System.currentTimeMillis() + offset;
        if (Math.floorDiv(startTrue, 30_000) == Math.floorDiv(endTrue, 30_000)) {
          assertEquals(5, admitted, "admitted in one window of 5, across the step");
          return;
        }
        // The run crossed a true window's edge: again, in the next window (it cannot cross two).
        assertTrue(attempt == 0, "two runs crossed a 30 s window's edge");
      }
    }
  }
}
