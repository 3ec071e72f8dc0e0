package dev.sluice.store.memcached;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.RateLimiter;
import dev.sluice.spi.ClockedStore;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.FakeClock;
import dev.sluice.spi.ReferenceCounterStore;
import dev.sluice.spi.StoreClock;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Memcached's clock between measurements: memcached's time last measured, advanced on this host's
 * monotonic clock, so a step of the host's wall clock (as NTP steps a clock it finds off) moves
 * neither the store's clock nor a window number nor a token bucket's arrival time; a measurement
 * after the step reports the new offset from the wall clock and leaves the store's clock where it
 * was. The wall clock and the monotonic clock are fakes.
 */
class ClockOffsetTest {

  private final FakeClock wall = new FakeClock(1_800_000_010_000L);
  private final AtomicLong nanos = new AtomicLong(7_000_000_000L);
  private final Monotonic monotonic = new Monotonic(wall, nanos::get);
  private final ClockOffset offset =
      new ClockOffset(InetSocketAddress.createUnresolved("memcached", 11211), wall, monotonic);

  /** Memcached's time: 1.25 s ahead of the wall clock as it was at the start. */
  private long memcached = wall.millis() + 1_250;

  private void advance(long millis) {
    nanos.addAndGet(millis * 1_000_000);
    wall.advanceMillis(millis);
    memcached += millis;
  }

  /** A tick measured now, as the clock's steps record one: memcached's minus the monotonic's. */
  private void measure(long aligned) {
    offset.measured(memcached - monotonic.millis(), 2, aligned, false);
  }

  @Test
  void aStepOfTheHostsWallClockDoesNotMoveMemcachedsClock() {
    assertEquals(wall.millis(), offset.millis(wall), "the host's clock before the first");
    measure(60);
    assertEquals(memcached, offset.millis(wall), "measured");
    assertEquals(1_250, offset.offset());

    wall.advanceMillis(30_000);
    assertEquals(memcached, offset.millis(wall), "after a step of 30 s forward");
    assertEquals(1_250, offset.offset(), "the offset as last measured");
    advance(4_600);
    assertEquals(memcached, offset.millis(wall), "4.6 s on");

    measure(120);
    assertEquals(memcached, offset.millis(wall), "measured after the step");
    assertEquals(-28_750, offset.offset(), "the offset now measured");

    wall.advanceMillis(-60_000);
    advance(1_000);
    assertEquals(memcached, offset.millis(wall), "after a step of 60 s back");
    measure(180);
    assertEquals(31_250, offset.offset());
    assertEquals(memcached, offset.millis(wall));
  }

  private StoreClock storeClock() {
    return new StoreClock() {
      @Override
      public long offsetMillis() {
        return offset.offset();
      }

      @Override
      public long errorMillis() {
        return offset.error();
      }

      @Override
      public long millis(java.time.InstantSource host) {
        return offset.millis(host);
      }
    };
  }

  /**
   * A fixed window of 5 per 30 s and a token bucket (1 a second, burst 5), the host's clock stepped
   * 30 s forward while each is spent: the window admits 5, not 5 more, and the bucket's arrival
   * time is not written 30 s ahead, so the client gets its next token a second later.
   */
  @Test
  void aStepOfTheHostsWallClockMovesNeitherAWindowNorATokenBucket() {
    measure(60);
    CounterStore store = new ClockedStore(new ReferenceCounterStore(), storeClock());
    RateLimiter window =
        RateLimiter.fixedWindow(store).denyCacheSize(0).tier(5, Duration.ofSeconds(30)).build();
    RateLimiter bucket = RateLimiter.tokenBucket(store).tier(1, Duration.ofSeconds(1), 5).build();
    int admitted = 0;
    for (int i = 0; i < 3; i++) {
      admitted += window.tryAcquire("client").allowed() ? 1 : 0;
      assertTrue(bucket.tryAcquire("client").allowed(), "the burst, request " + i);
    }
    wall.advanceMillis(30_000);
    for (int i = 0; i < 5; i++) {
      admitted += window.tryAcquire("client").allowed() ? 1 : 0;
    }
    assertEquals(5, admitted, "admitted in one window of 5 across the step");
    assertTrue(bucket.tryAcquire("client").allowed(), "the burst's fourth");
    assertTrue(bucket.tryAcquire("client").allowed(), "the burst's fifth");
    assertFalse(bucket.tryAcquire("client").allowed(), "the bucket is empty");
    advance(1_000);
    assertTrue(bucket.tryAcquire("client").allowed(), "a token a second later");
  }
}
