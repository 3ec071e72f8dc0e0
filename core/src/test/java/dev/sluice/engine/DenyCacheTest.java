package dev.sluice.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.RateLimiter;
import dev.sluice.spi.CollidingIdentities;
import dev.sluice.spi.FakeClock;
import dev.sluice.spi.ReferenceCounterStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class DenyCacheTest {

  @Test
  void identitiesThatShareAHashFillOnlyTheSlotsALookupReads() {
    DenyCache cache = new DenyCache(10_000);
    List<String> flood = CollidingIdentities.of(10);
    assertEquals(1, flood.stream().mapToInt(String::hashCode).distinct().count());
    for (String identity : flood) {
      cache.put(new DenyCache.Denial(identity, 1_000, 0, 5, 1_000), 0);
    }
    assertEquals(DenyCache.MAXIMUM_PROBE, cache.size(), "the rest are not cached, not a long run");
    int found = 0;
    for (String identity : flood) {
      found += cache.get(identity, 0) == null ? 0 : 1;
    }
    assertEquals(DenyCache.MAXIMUM_PROBE, found);
    cache.put(new DenyCache.Denial("someone else", 1_000, 0, 5, 1_000), 0);
    assertNotNull(cache.get("someone else", 0), "other identities are still cached");
  }

  @Test
  void aDenialIsReplacedOnlyByALaterOneAndLapsesAtItsInstant() {
    DenyCache cache = new DenyCache(100);
    cache.put(new DenyCache.Denial("k", 2_000, 1, 7, 3_000), 0);
    cache.put(new DenyCache.Denial("k", 1_500, 0, 9, 3_000), 0);
    assertEquals(2_000, cache.get("k", 0).untilMillis(), "an earlier denial does not shorten it");
    cache.put(new DenyCache.Denial("k", 2_500, 0, 9, 3_000), 0);
    DenyCache.Denial d = cache.get("k", 0);
    assertEquals(2_500, d.untilMillis());
    assertEquals(0, d.tier());
    assertEquals(9, d.used());
    assertEquals(1, cache.size());
    assertNotNull(cache.get(new String("k"), 2_499), "found by an equal string, not only the same");
    assertNull(cache.get("k", 2_500));
  }

  @Test
  void anExpiredDenialsSlotIsReusedInPlace() {
    DenyCache cache = new DenyCache(4);
    List<String> keys = CollidingIdentities.of(3);
    for (int i = 0; i < 4; i++) {
      cache.put(new DenyCache.Denial(keys.get(i), 100, 0, 1, 100), 0);
    }
    assertEquals(4, cache.size());
    cache.put(new DenyCache.Denial(keys.get(4), 500, 0, 1, 500), 200);
    assertEquals(4, cache.size(), "the first expired slot was reused; nothing was swept");
    assertNotNull(cache.get(keys.get(4), 200));
    assertNull(cache.get(keys.get(1), 200), "expired");
  }

  /**
   * Readers never see another identity's denial, nor a torn one, while a writer fills the table and
   * it grows from 16 slots to 32,768. Each identity's denial names its own number.
   */
  @Test
  void lookupsDuringGrowthFindOnlyTheirOwnDenial() throws Exception {
    int n = 10_000;
    DenyCache cache = new DenyCache(n);
    String[] ids = new String[n];
    for (int i = 0; i < n; i++) {
      ids[i] = "id-" + i;
    }
    AtomicBoolean done = new AtomicBoolean();
    ExecutorService pool = Executors.newFixedThreadPool(3);
    try {
      List<Future<Integer>> readers = new ArrayList<>();
      for (int r = 0; r < 2; r++) {
        int start = r;
        readers.add(
            pool.submit(
                () -> {
                  int seen = 0;
                  for (int i = start; !done.get(); i = (i + 7) % n) {
                    DenyCache.Denial d = cache.get(new String(ids[i]), 0);
                    if (d != null) {
                      assertEquals(i + 1, d.untilMillis(), ids[i]);
                      assertEquals(i, d.used(), ids[i]);
                      seen++;
                    }
                  }
                  return seen;
                }));
      }
      Future<?> writer =
          pool.submit(
              () -> {
                for (int i = 0; i < n; i++) {
                  cache.put(new DenyCache.Denial(ids[i], i + 1, 0, i, i + 1), 0);
                }
                done.set(true);
              });
      writer.get(1, TimeUnit.MINUTES);
      for (Future<Integer> r : readers) {
        r.get(1, TimeUnit.MINUTES);
      }
    } finally {
      done.set(true);
      pool.shutdownNow();
    }
    int found = 0;
    for (int i = 0; i < n; i++) {
      found += cache.get(ids[i], 0) == null ? 0 : 1;
    }
    assertTrue(found > n * 0.99, "at most a few probe runs overflow at random: " + found);
  }

  /**
   * Figures kept for a denied identity cost nothing once the denial ends: no decision reads them
   * while no denial lasts, and the first decision of their identity while another's lasts drops
   * them, so an identity denied once does not cost every later allowed decision a copy.
   */
  @Test
  void theFiguresOfALapsedDenialAreReadNoMoreAndDropped() {
    FakeClock clock = new FakeClock();
    RateLimiter l =
        RateLimiter.fixedWindow(new ReferenceCounterStore())
            .clock(clock)
            .tier(1, Duration.ofSeconds(1))
            .build();
    Recall recall = ((SingleRateLimiter) l).policy().recall;
    assertTrue(l.tryAcquire("k").allowed());
    assertFalse(l.tryAcquire("k").allowed());
    assertEquals(1, recall.size(), "kept while denied");
    clock.advance(Duration.ofSeconds(1));
    assertNull(recall.get("k", clock.millis()), "lapsed with its denial");
    assertTrue(l.tryAcquire("j").allowed());
    assertFalse(l.tryAcquire("j").allowed());
    assertTrue(l.tryAcquire("k").allowed());
    assertEquals(1, recall.size(), "k's lapsed figures dropped, j's kept");
    assertNotNull(recall.get("j", clock.millis()));
  }

  @Test
  void theDenyCacheStaysWithinItsBound() {
    FakeClock clock = new FakeClock();
    RateLimiter l =
        RateLimiter.fixedWindow(new ReferenceCounterStore())
            .tier(1, Duration.ofMinutes(1))
            .clock(clock)
            .denyCacheSize(100)
            .build();
    for (int i = 0; i < 1_000; i++) {
      l.tryAcquire("k" + i);
      l.tryAcquire("k" + i);
    }
    Policy p = ((SingleRateLimiter) l).policy();
    assertEquals(100, p.denyCache.size());
    clock.advance(Duration.ofMinutes(1));
    l.tryAcquire("new");
    l.tryAcquire("new");
    assertEquals(1, p.denyCache.size(), "expired denials are swept when the cache is full");
  }
}
