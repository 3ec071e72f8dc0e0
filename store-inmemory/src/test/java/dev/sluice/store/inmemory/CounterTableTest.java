package dev.sluice.store.inmemory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.spi.CounterUpdate;
import dev.sluice.spi.FakeClock;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The table behind {@link InMemoryCounterStore}: lookups, growth, removal and eviction. */
class CounterTableTest {

  private static final long SECOND = 1_000;
  private static final long MINUTE = 60 * SECOND;
  private static final long T0 = 1_700_000_040_000L;
  private static final long W = T0 / SECOND;

  private final FakeClock clock = new FakeClock(T0);

  private static long add(InMemoryCounterStore s, String identity, long period, long window) {
    return s.increment(List.of(new CounterUpdate("r", identity, period, window, 1)))[0];
  }

  @Test
  void threadsCreatingTheSameCountersWhileTheTableGrowsMakeOneEach() throws Exception {
    // From 16 slots to room for 20,000 counters while four threads race to create each one: a
    // counter created twice would split its adds, and some key would count fewer than 4.
    InMemoryCounterStore s = InMemoryCounterStore.builder().clock(clock).build();
    int threads = 4;
    int keys = 20_000;
    CountDownLatch start = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        List<Integer> order = new ArrayList<>();
        for (int k = 0; k < keys; k++) {
          order.add(k);
        }
        Collections.shuffle(order, new Random(t));
        done.add(
            pool.submit(
                () -> {
                  start.await();
                  for (int k : order) {
                    add(s, "client-" + k, SECOND, W);
                  }
                  return null;
                }));
      }
      start.countDown();
      for (Future<?> f : done) {
        f.get(60, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    for (int k = 0; k < keys; k++) {
      assertEquals(threads + 1, add(s, "client-" + k, SECOND, W), "client-" + k);
    }
    assertEquals(keys, s.liveCounters());
  }

  @Test
  void countersLeftAfterOthersExpireAreStillFound() {
    // One segment (a small bound) crowded with two kinds of counters in the same runs of slots: the
    // 1 s ones expire and are removed, and every 1 min one must still be reached by its probe.
    InMemoryCounterStore s =
        InMemoryCounterStore.builder().maximumCounters(2_000).clock(clock).build();
    for (int k = 0; k < 1_000; k++) {
      add(s, "short-" + k, SECOND, W);
      add(s, "long-" + k, MINUTE, T0 / MINUTE);
      add(s, "long-" + k, MINUTE, T0 / MINUTE);
    }
    assertEquals(2_000, s.liveCounters());
    clock.advanceMillis(3 * SECOND);
    assertEquals(1_000, s.liveCounters(), "the 1 s counters are gone");
    for (int k = 0; k < 1_000; k++) {
      assertEquals(3, add(s, "long-" + k, MINUTE, T0 / MINUTE), "long-" + k);
    }
    assertEquals(1_000, s.liveCounters(), "and no counter was made again");
  }

  @Test
  void aClientCountedOftenOutlivesAFloodOfNewIdentities() {
    // Ten times the bound in one-off identities, and a regular client between them: the flood
    // evicts itself, never the regular client, whose count keeps every add.
    int cap = 1_000;
    InMemoryCounterStore s =
        InMemoryCounterStore.builder().maximumCounters(cap).clock(clock).build();
    long regular = 0;
    for (int i = 0; i < 10 * cap; i++) {
      add(s, "flood-" + i, SECOND, W);
      if (i % 10 == 0) {
        regular = add(s, "regular", SECOND, W);
        assertEquals(i / 10 + 1, regular, "after " + i + " one-off identities");
      }
    }
    assertTrue(s.liveCounters() <= cap);
  }

  @Test
  void aHotCounterLooksUpRightWhileFloodsEvictAroundIt() throws Exception {
    // Two threads flood a small table (every new counter evicts one, moving others back in their
    // runs) while two count one client by name, each lookup racing those moves: every add lands.
    InMemoryCounterStore s =
        InMemoryCounterStore.builder().maximumCounters(500).clock(clock).build();
    int each = 50_000;
    CountDownLatch start = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        boolean flood = t < 2;
        int thread = t;
        done.add(
            pool.submit(
                () -> {
                  start.await();
                  for (int i = 0; i < each; i++) {
                    add(s, flood ? "flood-" + thread + "-" + i : "hot", SECOND, W);
                  }
                  return null;
                }));
      }
      start.countDown();
      for (Future<?> f : done) {
        f.get(60, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertEquals(2L * each + 1, add(s, "hot", SECOND, W));
    assertTrue(s.liveCounters() <= 500);
  }

  @Test
  void aStaleCounterIsEvictedBeforeACountedOne() {
    // Full of counters last counted two windows ago (not yet expired) and one counted now: a new
    // identity takes a stale one's place.
    int cap = 8;
    InMemoryCounterStore s =
        InMemoryCounterStore.builder().maximumCounters(cap).clock(clock).build();
    for (int k = 0; k < cap - 1; k++) {
      add(s, "stale-" + k, SECOND, W);
    }
    clock.advanceMillis(2 * SECOND);
    add(s, "now", SECOND, W + 2);
    add(s, "new", SECOND, W + 2);
    assertEquals(2, add(s, "now", SECOND, W + 2), "kept: counted in the current window");
  }

  @Test
  void aBoundPastWhatAHeapHoldsIsRefused() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> InMemoryCounterStore.builder().maximumCounters(Long.MAX_VALUE));
    assertTrue(e.getMessage().contains("maximumCounters"), e.getMessage());
    InMemoryCounterStore.builder().maximumCounters(1L << 30).build();
  }
}
