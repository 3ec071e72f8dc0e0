package dev.sluice.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Instant;
import java.time.InstantSource;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Redis's clock between measurements: the server's time last measured, advanced on this host's
 * monotonic clock, so that a step of the host's wall clock (as NTP steps a clock it finds off)
 * moves neither the store's clock nor a window number; a measurement after the step reports the new
 * offset and leaves the store's clock where it was. Time is a fake: Redis's, the host's wall clock
 * and its monotonic clock all move only when told to.
 */
class RedisClockTest {

  /** Where the true time starts: 2027-01-15T08:00:00Z plus a little, microseconds. */
  private static final long START_MICROS = 1_800_000_012_345_678L;

  /** The fake world: true time, Redis's lead on it, the host's wall clock, its monotonic clock. */
  private static final class World {
    long trueMicros = START_MICROS;
    long redisAheadMicros = 250_000;
    long wallAheadMillis = -420_000;
    long nanos = 5_000_000_000L;

    /** The monotonic clock runs this many ppm fast (a crystal's drift). */
    long driftPpm;

    void advanceMicros(long micros) {
      trueMicros += micros;
      nanos += micros * 1_000 + micros * driftPpm / 1_000;
    }

    long redisMillis() {
      return Math.floorDiv(trueMicros + redisAheadMicros, 1_000);
    }

    final InstantSource wall =
        new InstantSource() {
          @Override
          public Instant instant() {
            return Instant.EPOCH.plusNanos(trueMicros * 1_000).plusMillis(wallAheadMillis);
          }
        };

    /** {@code TIME}, answered in the middle of a round trip of 200 µs. */
    long[] time(long waitMillis) {
      advanceMicros(100);
      long t = trueMicros + redisAheadMicros;
      advanceMicros(100);
      return new long[] {t / 1_000_000, t % 1_000_000};
    }
  }

  private final World world = new World();
  private final ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1);

  private RedisClock clock() {
    RedisClock c =
        new RedisClock(
            world::time, "redis", world.wall, () -> world.nanos, scheduler, 30_000, 1_000);
    // Measured again only by hand: nothing runs in the background.
    scheduler.shutdownNow();
    return c;
  }

  @AfterEach
  void stop() {
    scheduler.shutdownNow();
  }

  @Test
  void aStepOfTheHostsWallClockDoesNotMoveRedisClock() {
    RedisClock clock = clock();
    assertEquals(world.redisMillis(), clock.millis(world.wall), "measured");
    assertEquals(420_250, clock.offsetMillis());
    long window = Math.floorDiv(clock.millis(world.wall), 30_000);

    world.wallAheadMillis += 30_000;
    assertEquals(world.redisMillis(), clock.millis(world.wall), "after a step of 30 s forward");
    assertEquals(window, Math.floorDiv(clock.millis(world.wall), 30_000), "the window number");
    assertEquals(420_250, clock.offsetMillis(), "the offset as last measured");

    world.advanceMicros(2_500_000);
    assertEquals(world.redisMillis(), clock.millis(world.wall), "2.5 s on");

    clock.measure(500);
    assertEquals(world.redisMillis(), clock.millis(world.wall), "measured after the step");
    assertEquals(390_250, clock.offsetMillis(), "the offset now measured");

    world.wallAheadMillis -= 60_000;
    world.advanceMicros(1_000_000);
    assertEquals(world.redisMillis(), clock.millis(world.wall), "after a step of 60 s back");
    clock.measure(500);
    assertEquals(world.redisMillis(), clock.millis(world.wall), "measured after the step back");
    assertEquals(450_250, clock.offsetMillis());
  }

  @Test
  void beforeTheFirstMeasurementItReadsTheHostsClock() {
    RedisClock clock =
        new RedisClock(
            wait -> {
              throw new java.io.IOException("down");
            },
            "redis",
            world.wall,
            () -> world.nanos,
            scheduler,
            30_000,
            1_000);
    scheduler.shutdownNow();
    assertEquals(-1, clock.errorMillis());
    assertEquals(world.wall.millis(), clock.millis(world.wall));
    world.wallAheadMillis += 30_000;
    assertEquals(world.wall.millis(), clock.millis(world.wall), "the host's, stepped");
  }

  /**
   * A monotonic clock 100 ppm fast drifts 3 ms from Redis's in 30 s; the next measurement takes it
   * back, within the microsecond the measurement places Redis's time in.
   */
  @Test
  void aMeasurementCorrectsWhatTheMonotonicClockDrifted() {
    world.driftPpm = 100;
    RedisClock clock = clock();
    world.advanceMicros(30_000_000);
    assertEquals(world.redisMillis() + 3, clock.millis(world.wall), "drifted");
    clock.measure(500);
    assertEquals(world.redisMillis(), clock.millis(world.wall), "measured again");
  }
}
