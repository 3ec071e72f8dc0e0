package dev.sluice.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What every {@link CounterStore} must do: windowed and running counters, expiry, the ceiling, and
 * refunds. A store module extends this class and says how to make its store; the store must start
 * empty for each test. A store that keeps shared values also implements {@link
 * SharedValuesContract}.
 */
public abstract class CounterStoreContract {

  protected static final long SECOND = 1_000;

  /** A window index of today, so stores that derive TTLs from it see realistic values. */
  protected static final long W = System.currentTimeMillis() / SECOND;

  protected CounterStore store;

  /** A new, empty store. */
  protected abstract CounterStore createStore() throws Exception;

  /** How many threads the exactness test runs; stores may lower it to keep the test quick. */
  protected int threads() {
    return 8;
  }

  /** Increments per thread in the exactness test. */
  protected int incrementsPerThread() {
    return 2_000;
  }

  /** {@return the store under test, new and empty for each test} */
  public CounterStore store() {
    return store;
  }

  @BeforeEach
  void createTheStore() throws Exception {
    store = createStore();
  }

  @AfterEach
  void closeTheStore() {
    store.close();
  }

  protected static CounterUpdate up(String identity, long window, long delta) {
    return new CounterUpdate("r", identity, SECOND, window, delta);
  }

  protected Counts inc(CounterUpdate... updates) {
    return store.increment(List.of(updates));
  }

  @Test
  void firstIncrementReturnsTheDeltaAndNoPrevious() {
    assertEquals(Counts.of(3, 0), inc(up("first", W, 3)));
  }

  @Test
  void incrementsSum() {
    inc(up("sum", W, 1));
    inc(up("sum", W, 2));
    assertEquals(Counts.of(6, 0), inc(up("sum", W, 3)));
  }

  @Test
  void countsSaturateInsteadOfWrapping() {
    inc(up("huge", W, Long.MAX_VALUE - 1));
    assertEquals(Counts.of(Long.MAX_VALUE, 0), inc(up("huge", W, 5)));
    assertEquals(Counts.of(Long.MAX_VALUE, 0), inc(up("huge", W, Long.MAX_VALUE)));
  }

  @Test
  void rolloverMovesCurrentIntoPrevious() {
    inc(up("roll", W, 5));
    assertEquals(Counts.of(1, 5), inc(up("roll", W + 1, 1)));
    assertEquals(Counts.of(1, 1), inc(up("roll", W + 2, 1)));
  }

  @Test
  void windowsTwoOldAreForgotten() {
    inc(up("gap", W, 5));
    assertEquals(Counts.of(1, 0), inc(up("gap", W + 2, 1)));
  }

  @Test
  void keysStayApart() {
    inc(new CounterUpdate("r", "a", SECOND, W, 7));
    assertEquals(Counts.of(1, 0), inc(new CounterUpdate("r", "b", SECOND, W, 1)), "identity");
    assertEquals(Counts.of(1, 0), inc(new CounterUpdate("q", "a", SECOND, W, 1)), "policy");
    assertEquals(Counts.of(1, 0), inc(new CounterUpdate("r", "a", 2 * SECOND, W, 1)), "period");
    assertEquals(Counts.of(8, 0), inc(new CounterUpdate("r", "a", SECOND, W, 1)), "same key");
  }

  @Test
  void separatorsInRuleAndIdentityDoNotMakeKeysMeet() {
    inc(new CounterUpdate("a:b", "c", SECOND, W, 1));
    assertEquals(Counts.of(1, 0), inc(new CounterUpdate("a", "b:c", SECOND, W, 1)));
  }

  @Test
  void aBatchAnswersEveryCounterInOrder() {
    inc(up("b1", W - 1, 4), up("b2", W - 1, 9));
    Counts r = inc(up("b1", W, 1), up("b2", W, 2), up("b3", W, 3));
    assertEquals(Counts.of(1, 4, 2, 9, 3, 0), r);
  }

  @Test
  void theSameCounterTwiceInABatchCountsTwice() {
    Counts r = inc(up("twice", W, 1), up("twice", W, 1));
    assertEquals(2, Math.max(r.current(0), r.current(1)));
  }

  @Test
  void decrementGivesBackAndNeverGoesBelowZero() throws Exception {
    inc(up("refund", W, 3));
    store.decrementAsync(List.of(up("refund", W, 2))).get(5, TimeUnit.SECONDS);
    assertEquals(Counts.of(2, 0), inc(up("refund", W, 1)));
    store.decrement(List.of(up("refund", W, 10)));
    assertEquals(Counts.of(1, 0), inc(up("refund", W, 1)));
  }

  private static CounterUpdate run(String identity, long window, long delta, long floor) {
    return new CounterUpdate("r", identity, SECOND, window, delta, floor);
  }

  @Test
  void aRunningCounterStartsAtItsFloorAndCatchesUpWithIt() {
    assertEquals(Counts.of(1_010, 0), inc(run("run", W, 10, 1_000)));
    assertEquals(Counts.of(1_020, 0), inc(run("run", W, 10, 1_000)), "above the floor");
    // Behind a floor that rose: raised to it first (a bucket that sat full).
    assertEquals(Counts.of(5_010, 0), inc(run("run", W, 10, 5_000)));
    assertEquals(Counts.of(5_020, 0), inc(run("run", W, 10, 4_000)), "kept its lead");
  }

  private static CounterUpdate capped(String identity, long delta, long floor, long ceiling) {
    return new CounterUpdate("r", identity, SECOND, W, delta, floor, false, ceiling);
  }

  @Test
  void aRunningCounterWithinItsCeilingIsWritten() {
    assertEquals(Counts.of(1_010, 0), inc(capped("cap", 10, 1_000, 1_010)), "at it");
    assertEquals(Counts.of(1_020, 0), inc(capped("cap", 10, 1_000, 1_030)));
    assertEquals(Counts.of(1_030, 0), inc(run("cap", W, 10, 1_000)), "written");
  }

  @Test
  void aRunningCounterPastItsCeilingWritesNothingAndReportsWhatItWouldHold() {
    inc(capped("full", 10, 1_000, 1_030));
    inc(capped("full", 10, 1_000, 1_030));
    // 1,020 + 15 > 1,030: reported, not stored.
    assertEquals(Counts.of(1_035, 0), inc(capped("full", 15, 1_000, 1_030)));
    assertEquals(Counts.of(1_035, 0), inc(capped("full", 15, 1_000, 1_030)), "again");
    assertEquals(Counts.of(1_030, 0), inc(capped("full", 10, 1_000, 1_030)), "room left");
    assertEquals(Counts.of(1_040, 0), inc(run("full", W, 10, 1_000)));
  }

  @Test
  void aRefusedRaiseDoesNotMoveTheCounterToItsFloor() {
    inc(capped("behind", 10, 1_000, 2_000));
    // Behind a floor of 5,000, but 5,010 is past the ceiling: the counter stays at 1,010.
    assertEquals(Counts.of(5_010, 0), inc(capped("behind", 10, 5_000, 5_005)));
    assertEquals(Counts.of(1_020, 0), inc(run("behind", W, 10, 1)));
  }

  @Test
  void aCounterTheStoreDoesNotHoldPastItsCeilingIsNotCreated() {
    assertEquals(Counts.of(1_010, 0), inc(capped("absent", 10, 1_000, 1_005)));
    assertEquals(Counts.of(1_005, 0), inc(run("absent", W, 5, 1_000)), "still absent");
  }

  @Test
  void eachCounterOfABatchIsJudgedAgainstItsOwnCeiling() {
    Counts r = inc(capped("a", 10, 1_000, 1_005), capped("b", 10, 1_000, 1_010), up("c", W, 1));
    assertEquals(Counts.of(1_010, 0, 1_010, 0, 1, 0), r);
    assertEquals(Counts.of(1_001, 0), inc(run("a", W, 1, 1_000)));
    assertEquals(Counts.of(1_011, 0), inc(run("b", W, 1, 1_000)));
  }

  @Test
  void concurrentCappedIncrementsAdmitExactlyUpToTheCeiling() throws Exception {
    int threads = threads();
    int per = 50;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<Integer>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        done.add(
            pool.submit(
                () -> {
                  int admitted = 0;
                  for (int i = 0; i < per; i++) {
                    if (inc(capped("gate", 1, 1_000, 1_100)).current(0) <= 1_100) {
                      admitted++;
                    }
                  }
                  return admitted;
                }));
      }
      int admitted = 0;
      for (Future<Integer> f : done) {
        admitted += f.get(120, TimeUnit.SECONDS);
      }
      assertEquals(Math.min(100, threads * per), admitted);
      assertEquals(Counts.of(1_101, 0), inc(capped("gate", 1, 1_000, 1_100)));
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aRunningCounterIsOneValueWhateverTheWindow() {
    inc(run("one", W, 10, 1_000));
    assertEquals(Counts.of(1_020, 0), inc(run("one", W + 1, 10, 1_000)));
    assertEquals(Counts.of(1_030, 0), inc(run("one", W + 5, 10, 1_000)));
  }

  @Test
  void aRunningCounterIsRefunded() {
    inc(run("back", W, 10, 1_000));
    inc(run("back", W, 10, 1_000));
    store.decrement(List.of(run("back", W + 1, 10, 1_000)));
    assertEquals(Counts.of(1_020, 0), inc(run("back", W + 1, 10, 1_000)));
  }

  @Test
  void concurrentRunningIncrementsAboveTheFloorAreExact() throws Exception {
    inc(run("race", W, 1, 1_000));
    int threads = threads();
    int per = incrementsPerThread() / 4;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        done.add(
            pool.submit(
                () -> {
                  for (int i = 0; i < per; i++) {
                    inc(run("race", W, 1, 1_000));
                  }
                }));
      }
      for (Future<?> f : done) {
        f.get(120, TimeUnit.SECONDS);
      }
      assertEquals(Counts.of(1_001L + (long) threads * per + 1, 0), inc(run("race", W, 1, 1_000)));
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void asyncIncrementAgreesWithSync() throws Exception {
    inc(up("async", W - 1, 2));
    Counts r = store.incrementAsync(List.of(up("async", W, 5))).get(5, TimeUnit.SECONDS);
    assertEquals(Counts.of(5, 2), r);
  }

  @Test
  void aWindowOfThirtyOneDaysWorks() {
    long period = Duration.ofDays(31).toMillis();
    long w = System.currentTimeMillis() / period;
    inc(new CounterUpdate("month", "m", period, w - 1, 2));
    assertEquals(Counts.of(1, 2), inc(new CounterUpdate("month", "m", period, w, 1)));
  }

  @Test
  void hostileIdentitiesAreKeptApart() {
    List<String> hostile =
        List.of(
            "with space",
            "cr\rlf\nmixed",
            "\r\nflush_all",
            "x".repeat(10_240),
            "x".repeat(10_239) + "y",
            "ключ-Schlüssel-鍵-🔑",
            "",
            " ",
            "\u0000nul",
            "tab\tkey",
            "a".repeat(250),
            "a".repeat(251));
    for (String id : hostile) {
      assertEquals(Counts.of(1, 0), inc(up(id, W, 1)), () -> "first for " + printable(id));
    }
    for (String id : hostile) {
      assertEquals(Counts.of(2, 0), inc(up(id, W, 1)), () -> "second for " + printable(id));
    }
  }

  @Test
  void concurrentIncrementsAreExact() throws Exception {
    int threads = threads();
    int per = incrementsPerThread();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    CountDownLatch start = new CountDownLatch(1);
    try {
      List<Future<long[]>> seen = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        seen.add(
            pool.submit(
                () -> {
                  start.await();
                  long[] values = new long[per];
                  for (int i = 0; i < per; i++) {
                    values[i] = inc(up("contended", W, 1)).current(0);
                  }
                  return values;
                }));
      }
      start.countDown();
      BitSet values = new BitSet();
      int count = 0;
      for (Future<long[]> f : seen) {
        for (long v : f.get(120, TimeUnit.SECONDS)) {
          values.set((int) v);
          count++;
        }
      }
      // Every increment saw a distinct count: none was lost and none was counted twice.
      assertEquals(threads * per, count);
      assertEquals(threads * per, values.cardinality());
      assertEquals(1, values.nextSetBit(0));
      assertEquals(threads * per, values.length() - 1);
      assertEquals(Counts.of((long) threads * per + 1L, 0), inc(up("contended", W, 1)));
    } finally {
      pool.shutdownNow();
    }
  }

  private static String printable(String s) {
    String head = s.length() > 40 ? s.substring(0, 40) + "…(" + s.length() + ")" : s;
    return Arrays.toString(head.codePoints().toArray());
  }
}
