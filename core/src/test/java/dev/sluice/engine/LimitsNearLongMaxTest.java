package dev.sluice.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.RateLimiter;
import dev.sluice.Tier;
import dev.sluice.spi.CounterUpdate;
import dev.sluice.spi.FakeClock;
import dev.sluice.spi.ReferenceCounterStore;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Limits whose counts could reach {@link Long#MAX_VALUE} are refused where they are written. */
class LimitsNearLongMaxTest {

  @Test
  void aLimitOrBurstPastTenToTheFifteenIsRefused() {
    for (long limit : new long[] {Tier.MAX_LIMIT + 1, 6_000_000_000_000_000_000L, Long.MAX_VALUE}) {
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> Tier.of(limit, Duration.ofSeconds(1)));
      assertEquals("limit must be at most 1000000000000000 (10^15), was " + limit, e.getMessage());
      assertThrows(IllegalArgumentException.class, () -> Tier.of(10, Duration.ofSeconds(1), limit));
    }
    assertEquals(Tier.MAX_LIMIT, Tier.of(Tier.MAX_LIMIT, Duration.ofDays(366)).limit());
  }

  @Test
  void theLargestLimitAdmitsExactlyItselfThroughARefund() {
    // The shape of the old failure: most of the limit, a request too many (refused, refunded),
    // then the rest: exactly the limit, never more.
    RateLimiter l =
        RateLimiter.fixedWindow(new ReferenceCounterStore())
            .clock(new FakeClock())
            .tier(Tier.MAX_LIMIT, Duration.ofHours(1))
            .build();
    long most = Tier.MAX_LIMIT / 6 * 5;
    assertTrue(l.tryAcquire("k", most).allowed());
    assertFalse(l.tryAcquire("k", Tier.MAX_LIMIT - most + 1).allowed());
    assertTrue(l.tryAcquire("k", Tier.MAX_LIMIT - most).allowed());
    assertFalse(l.tryAcquire("k", 1).allowed());
  }

  @Test
  void aQuotaPastTheLargestLimitIsTheLargestLimit() {
    Policy p =
        new Policy(
            "p",
            Algorithm.FIXED_WINDOW,
            List.of(Tier.of(10, Duration.ofSeconds(1)), Tier.of(100, Duration.ofMinutes(1))),
            false,
            false,
            false,
            0,
            null);
    Policy scaled = p.withFirstLimit(Tier.MAX_LIMIT);
    assertEquals(Tier.MAX_LIMIT, scaled.tiers[1].limit(), "scaled, then held at the largest");
  }

  @Test
  void aSaturatedLocalCountIsNeverLoweredByARefund() {
    LocalCounters local = new LocalCounters(new FakeClock(), 10);
    CounterUpdate huge = new CounterUpdate("r", "k", 1_000, 7, Long.MAX_VALUE - 1);
    local.increment(List.of(huge));
    assertEquals(
        Long.MAX_VALUE, local.increment(List.of(new CounterUpdate("r", "k", 1_000, 7, 5)))[0]);
    local.decrement(List.of(new CounterUpdate("r", "k", 1_000, 7, 5)));
    assertEquals(
        Long.MAX_VALUE,
        local.increment(List.of(new CounterUpdate("r", "k", 1_000, 7, 1)))[0],
        "what it held past the top is unknown: it stays pinned");
  }
}
