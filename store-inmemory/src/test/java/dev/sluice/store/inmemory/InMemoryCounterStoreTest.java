package dev.sluice.store.inmemory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Decision;
import dev.sluice.Outcome;
import dev.sluice.RateLimiter;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterStoreContract;
import dev.sluice.spi.CounterUpdate;
import dev.sluice.spi.Counts;
import dev.sluice.spi.FakeClock;
import dev.sluice.spi.SharedValuesContract;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class InMemoryCounterStoreTest extends CounterStoreContract implements SharedValuesContract {

  private final FakeClock clock = new FakeClock(W * SECOND);

  @Override
  protected CounterStore createStore() {
    return InMemoryCounterStore.builder().clock(clock).build();
  }

  @Test
  void aCounterJustCreatedIsNeverSweptAsExpired() {
    // Created, its first add not yet made: a concurrent sweep must leave it, or that add and a
    // concurrent one for the same key would land in two counters (a lost count).
    dev.sluice.spi.CounterKey k = new dev.sluice.spi.CounterKey().set("r", "k", 1_000);
    assertEquals(false, new Counter(null, k).expired(Long.MAX_VALUE / 2));
  }

  @Test
  void aSaturatedCountIsNeverLoweredByARefund() {
    // Pinned at Long.MAX_VALUE, a count has lost what it held past it: a refund from it could
    // only leave it below the truth, so it stays pinned for the rest of its window.
    InMemoryCounterStore s = InMemoryCounterStore.builder().clock(clock).build();
    s.increment(List.of(new CounterUpdate("r", "huge", SECOND, W, Long.MAX_VALUE - 1)));
    s.increment(List.of(new CounterUpdate("r", "huge", SECOND, W, 5)));
    s.decrement(List.of(new CounterUpdate("r", "huge", SECOND, W, 5)));
    assertEquals(
        Long.MAX_VALUE,
        s.increment(List.of(new CounterUpdate("r", "huge", SECOND, W, 1))).current(0),
        "still pinned");
    s.increment(List.of(new CounterUpdate("b", "huge", SECOND, W, 5, Long.MAX_VALUE - 1)));
    s.decrement(List.of(new CounterUpdate("b", "huge", SECOND, W, 5, Long.MAX_VALUE - 1)));
    assertEquals(
        Long.MAX_VALUE,
        s.increment(List.of(new CounterUpdate("b", "huge", SECOND, W, 1, 1))).current(0),
        "a running counter too");
  }

  @Test
  void aMillionDistinctKeysNeverLiftTheLiveCountOverTheCap() {
    long cap = 10_000;
    InMemoryCounterStore bounded =
        InMemoryCounterStore.builder().maximumCounters(cap).clock(clock).build();
    long most = 0;
    for (int i = 0; i < 1_000_000; i++) {
      bounded.increment(List.of(new CounterUpdate("r", "flood-" + i, SECOND, W, 1)));
      if (i % 1_000 == 999) {
        most = Math.max(most, bounded.liveCounters());
      }
    }
    assertTrue(most <= cap, "live counters peaked at " + most);
    assertTrue(most >= cap / 2, "the cap should be used, not undercut: " + most);
  }

  @Test
  void aCounterIsReclaimedOnceTheWindowAfterItsNextHasBegun() {
    InMemoryCounterStore s = InMemoryCounterStore.builder().clock(clock).build();
    s.increment(
        List.of(
            new CounterUpdate("r", "old", SECOND, W, 1),
            new CounterUpdate("r", "older", 60 * SECOND, W / 60, 1)));
    assertEquals(2, s.liveCounters());
    // Window W + 1 may still ask for W as its previous; from W + 3 on, no one can.
    clock.advanceMillis(3 * SECOND - 1);
    assertEquals(2, s.liveCounters(), "kept while a window may still read it");
    clock.advanceMillis(1);
    assertEquals(1, s.liveCounters(), "the 1 s counter is gone, the 1 min one stays");
    clock.advance(Duration.ofMinutes(3));
    assertEquals(0, s.liveCounters());
  }

  /** One counter, named by one key object reused from call to call, as the engine's batch does. */
  private static final class ReusedKey implements dev.sluice.spi.CounterBatch {
    final dev.sluice.spi.CounterKey key = new dev.sluice.spi.CounterKey().set("r", "k", SECOND);
    long window = W;
    long current;

    long add(InMemoryCounterStore s) {
      s.increment(this);
      return current;
    }

    @Override
    public int size() {
      return 1;
    }

    @Override
    public String policy(int i) {
      return key.policy();
    }

    @Override
    public String identity(int i) {
      return key.identity();
    }

    @Override
    public long periodMillis(int i) {
      return key.periodMillis();
    }

    @Override
    public dev.sluice.spi.CounterKey key(int i) {
      return key;
    }

    @Override
    public long window(int i) {
      return window;
    }

    @Override
    public long delta(int i) {
      return 1;
    }

    @Override
    public void counted(int i, long current, long previous) {
      this.current = current;
    }
  }

  private static long addByName(InMemoryCounterStore s, long window) {
    return s.increment(List.of(new CounterUpdate("r", "k", SECOND, window, 1))).current(0);
  }

  @Test
  void aKeyThatRemembersAnExpiredCounterCountsInTheOneStoredNow() {
    InMemoryCounterStore s = InMemoryCounterStore.builder().clock(clock).build();
    ReusedKey batch = new ReusedKey();
    assertEquals(1, batch.add(s));
    assertEquals(2, batch.add(s), "the remembered counter");
    clock.advanceMillis(3 * SECOND);
    assertEquals(0, s.liveCounters(), "expired and dropped");
    batch.window = W + 3;
    assertEquals(1, batch.add(s));
    assertEquals(1, s.liveCounters(), "counted in a counter the store holds");
    assertEquals(2, addByName(s, W + 3), "a lookup by name finds the same counter");
  }

  @Test
  void aKeyUsedWithTwoStoresCountsInEach() {
    InMemoryCounterStore a = InMemoryCounterStore.builder().clock(clock).build();
    InMemoryCounterStore b = InMemoryCounterStore.builder().clock(clock).build();
    ReusedKey batch = new ReusedKey();
    assertEquals(1, batch.add(a));
    assertEquals(1, batch.add(b));
    assertEquals(2, batch.add(a));
    assertEquals(2, batch.add(b));
  }

  @Test
  void aKeyThatRemembersAnEvictedCounterNeverCountsInIt() {
    InMemoryCounterStore s = InMemoryCounterStore.builder().maximumCounters(2).clock(clock).build();
    ReusedKey batch = new ReusedKey();
    for (int i = 0; i < 200; i++) {
      long remembered = batch.add(s);
      // A flood of other clients, which evicts the counter from time to time.
      for (int j = 0; j < 5; j++) {
        s.increment(List.of(new CounterUpdate("r", "other-" + i + "-" + j, SECOND, W, 1)));
      }
      long byName = addByName(s, W);
      // Both ways reach one counter, a stored one: the count by name follows the remembered one,
      // unless the counter was evicted in between (then the name starts again at 1).
      assertTrue(
          byName == remembered + 1 || byName == 1,
          "round " + i + ": remembered " + remembered + ", by name " + byName);
      assertEquals(byName + 1, batch.add(s), "round " + i + ": the remembered counter is stored");
    }
  }

  @Test
  void aPreviousWindowSurvivesUntilTheNextWindowEnds() {
    InMemoryCounterStore s = InMemoryCounterStore.builder().clock(clock).build();
    s.increment(List.of(new CounterUpdate("r", "k", SECOND, W, 4)));
    clock.advance(Duration.ofMillis(1_999));
    assertEquals(
        Counts.of(1, 4), s.increment(List.of(new CounterUpdate("r", "k", SECOND, W + 1, 1))));
  }

  @Test
  void aLimiterOnTheStoreLimits() {
    RateLimiter l =
        RateLimiter.slidingWindow(store).tier(3, Duration.ofSeconds(1)).clock(clock).build();
    for (int i = 0; i < 3; i++) {
      assertTrue(l.tryAcquire("k").allowed());
    }
    Decision d = l.tryAcquire("k");
    assertEquals(false, d.allowed());
    // 3 × (1 − g) + 1 ≤ 3 from g = 1/3 of the next window on.
    assertEquals(Duration.ofMillis(1_334), d.retryAfter());
  }

  @Test
  void concurrentAddsAreNeverLostAcrossAWindowChange() throws Exception {
    InMemoryCounterStore s = InMemoryCounterStore.builder().clock(clock).build();
    int threads = 4;
    int each = 20_000;
    CounterTableTest.race(
        threads,
        t -> {
          for (int i = 0; i < each; i++) {
            // Half the adds go to window W, half to W + 1: the W + 1 slot is reset while others
            // still add to W.
            s.increment(List.of(new CounterUpdate("r", "hot", SECOND, W + (i & 1), 1)));
          }
        });
    Counts counts = s.increment(List.of(new CounterUpdate("r", "hot", SECOND, W + 1, 1)));
    assertEquals(
        Counts.of(threads * each / 2 + 1, threads * each / 2),
        counts,
        "every add counted in the window it named");
  }

  @Test
  void aReusedOutcomeAnswersAsTheDecisionDoes() {
    RateLimiter l =
        RateLimiter.fixedWindow(store).tier(2, Duration.ofSeconds(10)).clock(clock).build();
    Outcome out = new Outcome();
    assertTrue(l.tryAcquire("a", 1, out));
    assertEquals(1, out.remaining());
    assertTrue(l.tryAcquire("a", 1, out));
    assertEquals(false, l.tryAcquire("a", 1, out));
    Decision d = l.tryAcquire("a");
    assertEquals(d.allowed(), out.allowed());
    assertEquals(d.retryAfter().toMillis(), out.retryAfterMillis());
    assertEquals(d.remaining(), out.remaining());
    assertTrue(l.tryAcquire("b", 1, out), "the same outcome serves the next key");
    assertEquals(1, out.remaining());
  }
}
