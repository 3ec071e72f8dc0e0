package dev.sluice;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.spi.FakeClock;
import dev.sluice.spi.RecordingStore;
import dev.sluice.spi.ReferenceCounterStore;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

class RateLimiterTest {

  private final FakeClock clock = new FakeClock();
  private final ReferenceCounterStore store = new ReferenceCounterStore();

  @Test
  void everyTierMustPassAndTheClosestOneBinds() {
    RateLimiter l =
        RateLimiter.fixedWindow(store)
            .clock(clock)
            .tier(5, Duration.ofSeconds(1))
            .tier(8, Duration.ofSeconds(10))
            .build();
    Decision d = l.tryAcquire("k");
    assertEquals(5, d.limit(), "1 s tier has fewer left");
    assertEquals(4, d.remaining());
    assertEquals(2, d.quotas().size());
    for (int i = 0; i < 4; i++) {
      l.tryAcquire("k");
    }
    Decision sixth = l.tryAcquire("k");
    assertFalse(sixth.allowed());
    assertEquals(Duration.ofSeconds(1), sixth.tier().period());
    clock.advance(Duration.ofSeconds(1));
    for (int i = 0; i < 3; i++) {
      assertTrue(l.tryAcquire("k").allowed());
    }
    Decision ninth = l.tryAcquire("k");
    assertFalse(ninth.allowed());
    assertEquals(8, ninth.limit(), "now the 10 s tier binds");
    assertEquals(Duration.ofSeconds(9), ninth.retryAfter());
  }

  /** Core alone has no two-layer counting: a synced limiter says which module it needs. */
  @Test
  void aSyncedLimiterWithoutTheTwoLayerModuleFailsToBuildNamingIt() {
    RateLimiter.Builder b =
        RateLimiter.fixedWindow(store)
            .tier(5, Duration.ofSeconds(1))
            .sync(Sync.every(Duration.ofMillis(200)));
    IllegalStateException e = assertThrows(IllegalStateException.class, b::build);
    assertTrue(e.getMessage().contains("dev.sluice:sluice-twolayer"), e.getMessage());
  }

  @Test
  void aRejectionByOneTierGivesBackWhatTheOtherTiersTook() {
    RateLimiter l =
        RateLimiter.fixedWindow(store)
            .clock(clock)
            .denyCacheSize(0)
            .tier(1, Duration.ofSeconds(1))
            .tier(100, Duration.ofSeconds(10))
            .build();
    long w10 = clock.millis() / 10_000;
    for (int i = 0; i < 50; i++) {
      l.tryAcquire("k");
    }
    assertEquals(
        1, store.count("default", "k", 10_000, w10), "rejected requests ate the 10 s quota");
  }

  @Test
  void oneBatchedStoreCallPerDecisionWhateverTheTiers() {
    RateLimiter l =
        RateLimiter.slidingWindow(store)
            .clock(clock)
            .tier(100, Duration.ofSeconds(1))
            .tier(1000, Duration.ofMinutes(1))
            .tier(5000, Duration.ofHours(1))
            .build();
    for (int i = 0; i < 10; i++) {
      l.tryAcquire("k");
    }
    assertEquals(10, store.incrementCalls());
  }

  @Test
  void limitersWithDifferentIdsCountApart() {
    RateLimiter a =
        RateLimiter.fixedWindow(store).id("a").tier(1, Duration.ofSeconds(1)).clock(clock).build();
    RateLimiter b =
        RateLimiter.fixedWindow(store).id("b").tier(1, Duration.ofSeconds(1)).clock(clock).build();
    assertTrue(a.tryAcquire("k").allowed());
    assertTrue(b.tryAcquire("k").allowed());
  }

  /**
   * A client sending long keys (an 8 KB header) cannot make each counter hold kilobytes: the store
   * sees at most 256 characters of identity, and long identities that differ only at their end are
   * still counted apart, each exactly.
   */
  @Property(tries = 50)
  void aLongIdentityReachesTheStoreBoundedAndCountedApart(
      @ForAll @IntRange(min = 257, max = 9_000) int length, @ForAll char last) {
    RecordingStore recorded = new RecordingStore(new ReferenceCounterStore());
    RateLimiter limiter =
        RateLimiter.fixedWindow(recorded)
            .id("r")
            .tier(2, Duration.ofSeconds(1))
            .clock(InstantSource.fixed(Instant.parse("2026-01-01T00:00:00.5Z")))
            .build();
    String prefix = "k".repeat(length - 1);
    String other = last == 'x' ? "y" : "x";
    assertTrue(limiter.tryAcquire(prefix + last).allowed());
    assertTrue(limiter.tryAcquire(prefix + last).allowed());
    assertFalse(limiter.tryAcquire(prefix + last).allowed(), "its own limit, exactly");
    assertTrue(limiter.tryAcquire(prefix + other).allowed(), "another identity, apart");
    for (String counted : recorded.take()) {
      assertTrue(counted.length() <= "r:".length() + 256, counted.length() + " characters");
    }
  }

  @Test
  void theDenyCacheAnswersRejectsWithoutTheStoreUntilTheRetryInstant() {
    RateLimiter l =
        RateLimiter.slidingWindow(store).tier(2, Duration.ofSeconds(10)).clock(clock).build();
    l.tryAcquire("k");
    l.tryAcquire("k");
    Decision first = l.tryAcquire("k");
    assertFalse(first.allowed());
    assertFalse(first.fromDenyCache());
    int calls = store.incrementCalls();
    clock.advance(Duration.ofSeconds(3));
    Decision cached = l.tryAcquire("k");
    assertFalse(cached.allowed());
    assertTrue(cached.fromDenyCache());
    assertEquals(first.retryAfter().minusSeconds(3), cached.retryAfter());
    assertEquals(calls, store.incrementCalls(), "no store call for a cached reject");
    assertTrue(l.tryAcquire("other").allowed(), "other keys are not affected");
    clock.advance(first.retryAfter().minusSeconds(3));
    assertTrue(l.tryAcquire("k").allowed(), "passes at the instant the decision named");
  }

  @Test
  void theDenyCacheGivesTheSameAnswersAsNoCache() {
    sameAnswersWithAndWithoutDenyCache(false);
  }

  /**
   * One outcome reused for keys that come back as the same objects, as a filter thread's outcome
   * sees a client hammering it: the deny-cache entry the outcome keeps for a key answers it until
   * it lapses, and never answers another key.
   */
  @Test
  void aReusedOutcomeGivesTheSameAnswersAsNoCache() {
    sameAnswersWithAndWithoutDenyCache(true);
  }

  private static void sameAnswersWithAndWithoutDenyCache(boolean reuseOutcome) {
    Random random = new Random(7);
    FakeClock c1 = new FakeClock();
    FakeClock c2 = new FakeClock();
    ReferenceCounterStore s1 = new ReferenceCounterStore();
    ReferenceCounterStore s2 = new ReferenceCounterStore();
    RateLimiter cached =
        RateLimiter.slidingWindow(s1)
            .tier(20, Duration.ofSeconds(1))
            .tier(100, Duration.ofSeconds(10))
            .clock(c1)
            .build();
    RateLimiter plain =
        RateLimiter.slidingWindow(s2)
            .tier(20, Duration.ofSeconds(1))
            .tier(100, Duration.ofSeconds(10))
            .clock(c2)
            .denyCacheSize(0)
            .build();
    String[] keys = {"k0", "k1", "k2"};
    Outcome out = new Outcome();
    int rejected = 0;
    for (int i = 0; i < 20_000; i++) {
      long step = random.nextInt(40);
      c1.advanceMillis(step);
      c2.advanceMillis(step);
      int k = random.nextInt(3);
      Decision b = plain.tryAcquire("k" + k);
      boolean allowed;
      if (reuseOutcome) {
        allowed = cached.tryAcquire(keys[k], 1, out);
        assertEquals(b.retryAfter().toMillis(), out.retryAfterMillis(), "request " + i);
      } else {
        allowed = cached.tryAcquire("k" + k).allowed();
      }
      assertEquals(b.allowed(), allowed, "request " + i + ": " + b);
      rejected += allowed ? 0 : 1;
    }
    assertTrue(rejected > 5_000, "the schedule must exercise rejections: " + rejected);
    assertTrue(
        s1.incrementCalls() < s2.incrementCalls() * 0.9,
        "cached " + s1.incrementCalls() + " vs plain " + s2.incrementCalls());
  }

  @Test
  void aFailingStoreFailsOpenByDefault() {
    RateLimiter l =
        RateLimiter.slidingWindow(store).tier(1, Duration.ofSeconds(1)).clock(clock).build();
    store.failWith(new IllegalStateException("down"));
    for (int i = 0; i < 3; i++) {
      Decision d = l.tryAcquire("k");
      assertTrue(d.allowed());
      assertEquals(StoreStatus.FAILED_OPEN, d.storeStatus());
      assertTrue(d.quotas().isEmpty());
    }
  }

  @Test
  void aFailingStoreFailsClosedWhenAsked() {
    RateLimiter l =
        RateLimiter.fixedWindow(store)
            .tier(1, Duration.ofSeconds(1))
            .clock(clock)
            .failClosed(true)
            .build();
    store.failWith(new IllegalStateException("down"));
    Decision d = l.tryAcquire("k");
    assertFalse(d.allowed());
    assertEquals(StoreStatus.FAILED_CLOSED, d.storeStatus());
    assertEquals(Duration.ofSeconds(1), d.retryAfter());
    store.failWith(null);
    assertTrue(l.tryAcquire("k").allowed(), "a failure is not remembered as a denial");
  }

  @Test
  void badConfigurationFailsAtBuildTimeNamingTheField() {
    assertEquals(
        "limit must be > 0",
        assertThrows(
                IllegalArgumentException.class,
                () -> RateLimiter.fixedWindow(store).tier(0, Duration.ofSeconds(1)))
            .getMessage());
    assertEquals(
        "period must be > 0",
        assertThrows(
                IllegalArgumentException.class,
                () -> RateLimiter.fixedWindow(store).tier(1, Duration.ZERO))
            .getMessage());
    assertEquals(
        "period must be > 0",
        assertThrows(
                IllegalArgumentException.class,
                () -> RateLimiter.fixedWindow(store).tier(1, Duration.ofSeconds(-1)))
            .getMessage());
    assertEquals(
        "tiers: at least one tier is required",
        assertThrows(IllegalArgumentException.class, () -> RateLimiter.slidingWindow(store).build())
            .getMessage());
    assertThrows(
        IllegalArgumentException.class,
        () -> RateLimiter.slidingWindow(store).staggerWindows(true));
    RateLimiter l = RateLimiter.fixedWindow(store).tier(1, Duration.ofSeconds(1)).build();
    assertEquals(
        "permits must be > 0",
        assertThrows(IllegalArgumentException.class, () -> l.tryAcquire("k", 0)).getMessage());
  }
}
