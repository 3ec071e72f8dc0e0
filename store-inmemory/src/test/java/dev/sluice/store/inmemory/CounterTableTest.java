package dev.sluice.store.inmemory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.spi.CollidingIdentities;
import dev.sluice.spi.CounterUpdate;
import dev.sluice.spi.FakeClock;
import java.util.ArrayList;
import java.util.List;
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
    return s.increment(List.of(new CounterUpdate("r", identity, period, window, 1))).current(0);
  }

  /** What one of {@link #race}'s threads does, given its number. */
  interface Racer {
    void run(int thread);
  }

  /** Runs {@code racer} on {@code threads} threads started together, and waits for them all. */
  static void race(int threads, Racer racer) throws Exception {
    CountDownLatch start = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int thread = t;
        done.add(
            pool.submit(
                () -> {
                  start.await();
                  racer.run(thread);
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
  }

  @Test
  void threadsCreatingTheSameCountersWhileTheTableGrowsMakeOneEach() throws Exception {
    // From 16 slots to room for 20,000 counters while four threads race to create each one: a
    // counter created twice would split its adds, and some key would count fewer than 4 (the
    // table would also hold more than 20,000).
    InMemoryCounterStore s = InMemoryCounterStore.builder().clock(clock).build();
    int threads = 4;
    int keys = 20_000;
    race(
        threads,
        t -> {
          // All in the same order, so that they reach each new key together.
          for (int k = 0; k < keys; k++) {
            add(s, "client-" + k, SECOND, W);
          }
        });
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
  void identitiesMadeToShareAHashReplaceOneAnotherInsteadOfLengtheningLookups() {
    // "Aa" and "BB" hash alike, so 4,096 identities of six such blocks share one counter hash: in a
    // table with room for all of them they would form one run that every lookup near it probes.
    InMemoryCounterStore s =
        InMemoryCounterStore.builder().maximumCounters(100_000).clock(clock).build();
    long regular = 0;
    for (String id : CollidingIdentities.of(12)) {
      add(s, id, SECOND, W);
      regular = add(s, "regular", SECOND, W);
    }
    assertEquals(1 << 12, regular, "a client outside the flood kept every add");
    assertTrue(
        s.liveCounters() <= CounterTable.MAXIMUM_PROBE + 1,
        "the flood holds no more slots than a lookup reads: " + s.liveCounters());
    String last = "BB".repeat(12);
    assertEquals(2, add(s, last, SECOND, W), "the newest of the flood is found");
  }

  @Test
  void aHotCounterLooksUpRightWhileFloodsEvictAroundIt() throws Exception {
    // Two threads flood a small table (every new counter evicts one, moving others back in their
    // runs) while two count one client by name, each lookup racing those moves: every add lands.
    InMemoryCounterStore s =
        InMemoryCounterStore.builder().maximumCounters(500).clock(clock).build();
    int each = 50_000;
    race(
        4,
        t -> {
          for (int i = 0; i < each; i++) {
            // Threads 0 and 1 flood, 2 and 3 count the hot client.
            add(s, t < 2 ? "flood-" + t + "-" + i : "hot", SECOND, W);
          }
        });
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
