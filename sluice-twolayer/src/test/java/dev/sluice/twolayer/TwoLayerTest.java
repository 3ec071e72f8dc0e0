package dev.sluice.twolayer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Outcome;
import dev.sluice.RateLimiter;
import dev.sluice.StoreStatus;
import dev.sluice.Sync;
import dev.sluice.TestSettings;
import dev.sluice.engine.EngineAccess;
import dev.sluice.engine.TwoLayerBatch;
import dev.sluice.spi.CounterUpdate;
import dev.sluice.spi.FakeClock;
import dev.sluice.spi.ReferenceCounterStore;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class TwoLayerTest {

  private static final Duration SECOND = Duration.ofSeconds(1);

  private final FakeClock clock = new FakeClock();
  private final ReferenceCounterStore store = new ReferenceCounterStore();

  /** An instance: a fixed-window limiter of 50 per second synced every 200 ms, synced by hand. */
  private RateLimiter instance(Sync sync, boolean failClosed) {
    RateLimiter.Builder b =
        RateLimiter.fixedWindow(store)
            .clock(clock)
            .id("api")
            .denyCacheSize(0)
            .failClosed(failClosed)
            .tier(50, SECOND);
    if (sync != null) {
      b.sync(sync);
    }
    TestSettings.syncByHand(b);
    return b.build();
  }

  private static TwoLayerStore layer(RateLimiter l) {
    return (TwoLayerStore) EngineAccess.twoLayer(l);
  }

  private long shared() {
    return store.count("api", "k", 1000, clock.millis() / 1000);
  }

  private static int allow(RateLimiter l, int n) {
    int allowed = 0;
    Outcome out = new Outcome();
    for (int i = 0; i < n; i++) {
      if (l.tryAcquire("k", 1, out)) {
        allowed++;
      }
    }
    return allowed;
  }

  /** One permit for each of keys {@code k0} to {@code k(n - 1)}. */
  private static void acquireEach(RateLimiter l, int n) {
    Outcome out = new Outcome();
    for (int k = 0; k < n; k++) {
      l.tryAcquire("k" + k, 1, out);
    }
  }

  @Test
  void withoutSyncEveryDecisionGoesToTheStore() {
    RateLimiter l = instance(null, false);
    allow(l, 10);
    assertEquals(10, store.incrementCalls());
    assertEquals(10, shared());
  }

  @Test
  void decisionsBetweenSyncsStayLocalAndOneSyncPushesThemAll() {
    RateLimiter l = instance(Sync.every(Duration.ofMillis(200)), false);
    assertEquals(30, allow(l, 30));
    assertEquals(0, store.incrementCalls(), "no decision went to the store");
    assertEquals(0, shared());
    layer(l).syncDue();
    assertEquals(1, store.incrementCalls(), "one batch for every due counter");
    assertEquals(30, shared());
    assertEquals(20, allow(l, 40), "the local view holds the limit: 50 in the window");
    clock.advanceMillis(199);
    layer(l).syncDue();
    assertEquals(1, store.incrementCalls(), "not due again before the interval");
    clock.advanceMillis(1);
    layer(l).syncDue();
    assertEquals(2, store.incrementCalls());
    assertEquals(50, shared(), "rejected requests were given back locally, never pushed");
  }

  @Test
  void storeCallsFollowTheIntervalNotTheRequestRate() {
    long[] calls = new long[2];
    int[] perMillis = {1, 20};
    for (int run = 0; run < 2; run++) {
      ReferenceCounterStore s = new ReferenceCounterStore();
      RateLimiter.Builder b =
          RateLimiter.fixedWindow(s)
              .clock(clock)
              .id("api")
              .tier(1_000_000, SECOND)
              .sync(Sync.every(Duration.ofMillis(100)));
      TestSettings.syncByHand(b);
      RateLimiter l = b.build();
      for (int ms = 0; ms < 2_000; ms++) {
        allow(l, perMillis[run]);
        if (ms % 5 == 0) {
          layer(l).syncDue();
        }
        clock.advanceMillis(1);
      }
      calls[run] = s.incrementCalls();
    }
    // 2 s at one push per 100 ms, plus one at each of the 2 window starts.
    assertTrue(calls[0] <= 22 && calls[0] >= 18, "slow: " + calls[0]);
    assertEquals(calls[0], calls[1], "20x the requests, the same store calls");
  }

  @Test
  void ticksBetweenIntervalsLeaveTheQueueAlone() {
    RateLimiter l = instance(Sync.every(Duration.ofMillis(200)), false);
    clock.advanceMillis(1000 - clock.millis() % 1000);
    TwoLayerStore layer = layer(l);
    Outcome out = new Outcome();
    acquireEach(l, 1_000);
    layer.syncDue();
    assertEquals(1, layer.scans.get());
    for (int ms = 1; ms < 200; ms++) {
      clock.advanceMillis(1);
      for (int k = 0; k < 1_000; k += 7) {
        l.tryAcquire("k" + k, 1, out);
      }
      if (ms % 5 == 0) {
        layer.syncDue();
      }
    }
    assertEquals(1, layer.scans.get(), "no counter was due: no tick took the queue out");
    assertEquals(1, store.incrementCalls());
    clock.advanceMillis(1);
    layer.syncDue();
    assertEquals(2, layer.scans.get());
    assertEquals(2, store.incrementCalls(), "every counter due at the interval, in one batch");
  }

  @Test
  void aScanLooksOnlyAtCountersThatMayBeDue() {
    RateLimiter l = instance(Sync.every(Duration.ofMillis(200)), false);
    clock.advanceMillis(1000 - clock.millis() % 1000);
    TwoLayerStore layer = layer(l);
    Outcome out = new Outcome();
    acquireEach(l, 1_000);
    layer.syncDue();
    clock.advanceMillis(50);
    acquireEach(l, 1_000); // queued again, due 200 ms after the push
    l.tryAcquire("x", 1, out);
    layer.syncDue(); // pushes x, its window's first count; finds the rest not due
    assertEquals(2, store.incrementCalls());
    long before = layer.sync.looked.get();
    clock.advanceMillis(50);
    l.tryAcquire("y", 1, out);
    layer.syncDue();
    assertEquals(3, store.incrementCalls());
    assertEquals(1, layer.sync.looked.get() - before, "only y: the others are not due yet");
    clock.advanceMillis(100);
    layer.syncDue();
    assertEquals(4, store.incrementCalls(), "the thousand at their interval, in one batch");
    assertEquals(2, store.count("api", "k999", 1000, clock.millis() / 1000));
  }

  @Test
  void aCounterWaitingOutItsIntervalIsPushedAtOnceInANewWindow() {
    RateLimiter l = instance(Sync.every(Duration.ofSeconds(10)), false);
    clock.advanceMillis(1000 - clock.millis() % 1000);
    Outcome out = new Outcome();
    l.tryAcquire("a", 1, out);
    layer(l).syncDue();
    clock.advanceMillis(10);
    l.tryAcquire("a", 1, out); // due 10 s after its push
    clock.advanceMillis(10);
    l.tryAcquire("b", 1, out);
    layer(l).syncDue(); // pushes b; a waits out its interval
    assertEquals(2, store.incrementCalls());
    clock.advanceMillis(980);
    l.tryAcquire("a", 1, out);
    layer(l).syncDue();
    assertEquals(3, store.incrementCalls(), "a new window: a is due at once");
    assertEquals(2, store.count("api", "a", 1000, clock.millis() / 1000 - 1));
    assertEquals(1, store.count("api", "a", 1000, clock.millis() / 1000));
  }

  @Test
  void aCounterQueuedAgainAfterAnotherPushIsStillPushedAtItsInterval() {
    RateLimiter l = instance(Sync.every(Duration.ofMillis(200)), false);
    clock.advanceMillis(1000 - clock.millis() % 1000);
    Outcome out = new Outcome();
    l.tryAcquire("a", 1, out);
    layer(l).syncDue(); // pushes a
    clock.advanceMillis(100);
    l.tryAcquire("b", 1, out);
    layer(l).syncDue(); // pushes b, its window's first count; a is not queued
    clock.advanceMillis(50);
    l.tryAcquire("a", 1, out); // a queued again: due 200 ms after its push
    layer(l).syncDue();
    assertEquals(2, store.incrementCalls());
    clock.advanceMillis(50);
    layer(l).syncDue();
    assertEquals(3, store.incrementCalls(), "a is pushed at its interval");
    assertEquals(2, store.count("api", "a", 1000, clock.millis() / 1000));
  }

  @Test
  void instancesSeeEachOthersCountsAfterASync() {
    Sync sync = new Sync(Duration.ofMillis(200), 2);
    RateLimiter a = instance(sync, false);
    RateLimiter b = instance(sync, false);
    assertEquals(30, allow(a, 30));
    layer(a).syncDue();
    assertEquals(1, allow(b, 1));
    layer(b).syncDue(); // b pushes its 1 and reads 31 back
    Outcome out = new Outcome();
    assertTrue(b.tryAcquire("k", 1, out));
    assertEquals(18, out.remaining(), "50 - 31 - this one");
    assertEquals(18, allow(b, 30), "b stops at the fleet's limit");
  }

  @Test
  void theFirstRequestOfAWindowIsPushedAtOnceAndTheWindowBeforeIsRead() {
    RateLimiter l = instance(Sync.every(Duration.ofSeconds(10)), false);
    allow(l, 5);
    layer(l).syncDue();
    assertEquals(1, store.incrementCalls(), "the first request of a window is due at once");
    allow(l, 5);
    layer(l).syncDue();
    assertEquals(1, store.incrementCalls(), "then not before the interval");
    clock.advance(SECOND);
    allow(l, 1);
    layer(l).syncDue();
    assertEquals(2, store.incrementCalls(), "a new window: due at once, old deltas in the batch");
    assertEquals(10, store.count("api", "k", 1000, clock.millis() / 1000 - 1));
    assertEquals(1, shared());
  }

  @Test
  void whenTheStoreIsDownCountingGoesOnUpToTheInstancesShareAndNothingIsLost() {
    RateLimiter open = instance(new Sync(Duration.ofMillis(100), 5), false);
    allow(open, 3);
    store.failWith(new IllegalStateException("memcached down"));
    layer(open).syncDue(); // fails: the store is known to be down
    // The share of one instance in five is 50 / 5 = 10: 7 more are counted locally, and past
    // that the rule's store-failure setting (allow) decides.
    Outcome out = new Outcome();
    for (int i = 0; i < 7; i++) {
      assertTrue(open.tryAcquire("k", 1, out));
      assertEquals(StoreStatus.OK, out.storeStatus(), "decided on local counts");
    }
    assertTrue(open.tryAcquire("k", 1, out));
    assertTrue(out.storeFailed(), "past its share, the store failure decides: fail open");

    store.failWith(null);
    clock.advanceMillis(100);
    layer(open).syncDue();
    assertEquals(10, shared(), "the deltas counted during the outage were pushed");
  }

  @Test
  void aFailClosedRuleRejectsOncePastItsShareDuringAnOutage() {
    RateLimiter closed = instance(new Sync(Duration.ofMillis(100), 10), true);
    store.failWith(new IllegalStateException("memcached down"));
    allow(closed, 1);
    layer(closed).syncDue();
    assertEquals(4, allow(closed, 10), "50 / 10 = 5 for this instance, 1 taken");
  }

  @Test
  void expiredLocalCountersAreSweptAndTheCapSendsNewOnesToTheStore() {
    RateLimiter l = instance(Sync.every(Duration.ofMillis(100)), false);
    Outcome out = new Outcome();
    for (int i = 0; i < 100; i++) {
      l.tryAcquire("client-" + i, 1, out);
    }
    TwoLayerStore layer = layer(l);
    assertEquals(100, layer.localCounters());
    layer.syncDue();
    clock.advance(Duration.ofSeconds(3));
    layer.sweep();
    assertEquals(0, layer.localCounters());

    TwoLayerStore capped = new TwoLayerStore(store, clock, 2, java.util.Optional.empty());
    int before = store.incrementCalls();
    for (int i = 0; i < 3; i++) {
      capped.increment(new OneCounter("c" + i, clock.millis() / 1000));
    }
    assertEquals(2, capped.localCounters());
    assertEquals(before + 1, store.incrementCalls(), "the third counter went to the store");
    assertFalse(capped.localCounters() > 2);
  }

  /**
   * A refund that comes after its count was pushed reaches the store with the next push, and the
   * counter, with nothing left to push, is swept: a two-layer limiter never admits less than a
   * direct one, and keeps no counter of an idle key.
   */
  @Test
  void aRefundAfterItsCountWasPushedReachesTheStoreAndTheCounterIsSwept() {
    TwoLayerStore layer = new TwoLayerStore(store, clock, 10, java.util.Optional.empty());
    clock.advanceMillis(1000 - clock.millis() % 1000);
    long w = clock.millis() / 1000;
    layer.increment(new OneCounter("c", w));
    layer.syncDue();
    assertEquals(1, store.count("cap", "c", 1000, w), "pushed");
    assertEquals(
        List.of(), layer.refundLocally(List.of(new CounterUpdate("cap", "c", 1000, w, 1))));
    clock.advanceMillis(100);
    layer.syncDue();
    assertEquals(0, store.count("cap", "c", 1000, w), "the refund reached the store");
    clock.advance(Duration.ofSeconds(3));
    layer.sweep();
    assertEquals(0, layer.localCounters(), "and the counter was swept");
  }

  /** The same when the window rolls before the next push: the refund is not lost in the roll. */
  @Test
  void aRefundAfterItsCountWasPushedReachesTheStoreAcrossARoll() {
    TwoLayerStore layer = new TwoLayerStore(store, clock, 10, java.util.Optional.empty());
    clock.advanceMillis(1000 - clock.millis() % 1000);
    long w = clock.millis() / 1000;
    layer.increment(new OneCounter("c", w));
    layer.syncDue();
    assertEquals(
        List.of(), layer.refundLocally(List.of(new CounterUpdate("cap", "c", 1000, w, 1))));
    clock.advanceMillis(1000);
    layer.increment(new OneCounter("c", w + 1));
    layer.syncDue();
    assertEquals(0, store.count("cap", "c", 1000, w), "the refund reached the store");
    assertEquals(1, store.count("cap", "c", 1000, w + 1));
  }

  /** A counter waiting out its interval when the rules shorten it is due at the shorter one. */
  @Test
  void aWaitingCounterIsDueSoonerUnderAShorterInterval() {
    TwoLayerStore layer = new TwoLayerStore(store, clock, 10, java.util.Optional.empty());
    clock.advanceMillis(1000 - clock.millis() % 1000);
    long w = clock.millis() / 1000;
    layer.increment(new OneCounter("c", w, 500));
    layer.syncDue();
    clock.advanceMillis(10);
    layer.increment(new OneCounter("c", w, 500)); // due 500 ms after its push
    layer.increment(new OneCounter("d", w, 500));
    layer.syncDue(); // pushes d; c waits
    assertEquals(1, store.count("cap", "c", 1000, w));
    clock.advanceMillis(100);
    layer.increment(new OneCounter("c", w, 100));
    layer.syncDue();
    assertEquals(3, store.count("cap", "c", 1000, w), "due 100 ms after its push");
  }

  /** A batch of one synced counter of policy "cap". */
  private static final class OneCounter implements TwoLayerBatch {
    final String identity;
    final long window;
    final long sync;

    OneCounter(String identity, long window) {
      this(identity, window, 100);
    }

    OneCounter(String identity, long window, long sync) {
      this.identity = identity;
      this.window = window;
      this.sync = sync;
    }

    @Override
    public int size() {
      return 1;
    }

    @Override
    public String policy(int i) {
      return "cap";
    }

    @Override
    public String identity(int i) {
      return identity;
    }

    @Override
    public long periodMillis(int i) {
      return 1000;
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
    public long syncMillis(int i) {
      return sync;
    }

    @Override
    public void counted(int i, long current, long previous) {}
  }

  @Test
  void aPushThatTimedOutIsNeverSentAgainSoMemcachedNeverCountsItTwice() {
    RateLimiter l = instance(Sync.every(Duration.ofMillis(200)), false);
    clock.advanceMillis(1000 - clock.millis() % 1000); // a window's start: room for 4 syncs
    assertEquals(20, allow(l, 20));
    store.applyThenFail(new dev.sluice.spi.StoreTimeoutException("no answer in 50 ms"));
    layer(l).syncDue();
    store.applyThenFail(null);
    assertEquals(20, shared(), "memcached applied the push after the client gave up");
    for (int i = 0; i < 3; i++) {
      clock.advanceMillis(200);
      layer(l).syncDue();
    }
    assertEquals(20, shared(), "and it was not sent again");
    assertEquals(20, layer(l).unconfirmedDeltas.get());
    assertEquals(1, allow(l, 1));
    clock.advanceMillis(200);
    layer(l).syncDue();
    assertEquals(21, shared(), "later permits are pushed as before");
  }

  @Test
  void aRefundOfAWindowAlreadyPushedGoesToTheSharedStore() {
    RateLimiter l = instance(Sync.every(Duration.ofMillis(200)), false);
    long w = clock.millis() / 1000;
    allow(l, 10);
    layer(l).syncDue();
    clock.advance(SECOND);
    allow(l, 1); // the counter moves to the next window
    List<CounterUpdate> rest =
        layer(l).refundLocally(List.of(new CounterUpdate("api", "k", 1000, w, 3)));
    assertEquals(List.of(new CounterUpdate("api", "k", 1000, w, 3)), rest, "sent, not dropped");
  }

  /**
   * {@link #store}, answering its first pushes as {@code gates} complete, in turn, and the rest at
   * once.
   */
  private dev.sluice.spi.CounterStore answeringAfter(List<CompletableFuture<Void>> gates) {
    AtomicInteger calls = new AtomicInteger();
    return new dev.sluice.spi.CounterStore() {
      @Override
      public dev.sluice.spi.Counts increment(List<CounterUpdate> updates) {
        return store.increment(updates);
      }

      @Override
      public CompletableFuture<dev.sluice.spi.Counts> incrementAsync(List<CounterUpdate> updates) {
        int call = calls.getAndIncrement();
        CompletableFuture<Void> gate =
            call < gates.size() ? gates.get(call) : CompletableFuture.completedFuture(null);
        return gate.thenApply(v -> store.increment(updates));
      }

      @Override
      public void decrement(List<CounterUpdate> updates) {
        store.decrement(updates);
      }
    };
  }

  /** A limiter synced by hand on {@code shared}: 50 a second, synced every 200 ms. */
  private RateLimiter syncedOn(dev.sluice.spi.CounterStore shared) {
    RateLimiter.Builder b =
        RateLimiter.fixedWindow(shared)
            .clock(clock)
            .id("api")
            .denyCacheSize(0)
            .tier(50, SECOND)
            .sync(Sync.every(Duration.ofMillis(200)));
    return TestSettings.syncByHand(b).build();
  }

  /** Completes {@code gate} with {@code failure} (or answers it) 50 ms from now. */
  private static void later(CompletableFuture<Void> gate, RuntimeException failure) {
    var unused =
        CompletableFuture.runAsync(
            () -> {
              if (failure == null) {
                gate.complete(null);
              } else {
                gate.completeExceptionally(failure);
              }
            },
            CompletableFuture.delayedExecutor(50, TimeUnit.MILLISECONDS));
  }

  @Test
  void aCounterWhosePushOutlastsItsIntervalIsPushedAgainOnceAnswered() {
    CompletableFuture<Void> gate = new CompletableFuture<>();
    RateLimiter l = syncedOn(answeringAfter(List.of(gate)));
    clock.advanceMillis(1000 - clock.millis() % 1000);
    Outcome out = new Outcome();
    assertEquals(5, allow(l, 5));
    layer(l).syncDue(); // in flight, not answered
    assertEquals(3, allow(l, 3)); // queued again: due 200 ms after that push
    clock.advanceMillis(50);
    l.tryAcquire("x", 1, out);
    layer(l).syncDue(); // pushes x; k waits for its interval
    clock.advanceMillis(250);
    layer(l).syncDue(); // k due, its push still in flight
    assertEquals(0, shared());
    gate.complete(null);
    assertEquals(5, shared());
    clock.advanceMillis(5);
    layer(l).syncDue();
    assertEquals(8, shared(), "pushed at the next tick once answered, not an interval later");
  }

  @Test
  void aFlushWaitsForThePushInFlightAndThenPushesTheRest() {
    CompletableFuture<Void> gate = new CompletableFuture<>();
    RateLimiter l = syncedOn(answeringAfter(List.of(gate)));
    assertEquals(5, allow(l, 5));
    layer(l).syncDue(); // a window's first counts: pushed at once, and not answered yet
    assertEquals(3, allow(l, 3));
    assertFalse(layer(l).flush(50), "a push without an answer is not confirmed");
    assertEquals(0, shared());
    later(gate, null);
    assertTrue(layer(l).flush(10_000), "confirmed");
    assertEquals(8, shared(), "the push in flight and the counts after it");
  }

  @Test
  void aFlushPushesAgainWhatAFailedPushInFlightGaveBack() {
    CompletableFuture<Void> gate = new CompletableFuture<>();
    RateLimiter l = syncedOn(answeringAfter(List.of(gate)));
    assertEquals(5, allow(l, 5));
    layer(l).syncDue();
    later(gate, new IllegalStateException("connection reset"));
    assertTrue(layer(l).flush(10_000), "the counts reached the store");
    assertEquals(5, shared());
  }

  @Test
  void aPushInFlightWithoutAnAnswerIsNotSentAgainAndTheFlushSaysSo() {
    CompletableFuture<Void> gate = new CompletableFuture<>();
    RateLimiter l = syncedOn(answeringAfter(List.of(gate)));
    assertEquals(5, allow(l, 5));
    layer(l).syncDue();
    later(gate, new dev.sluice.spi.StoreTimeoutException("no answer in 50 ms"));
    assertFalse(layer(l).flush(10_000), "memcached may or may not have counted them");
    assertEquals(0, shared(), "not sent twice");
    assertEquals(5, layer(l).unconfirmedDeltas.get());
  }
}
