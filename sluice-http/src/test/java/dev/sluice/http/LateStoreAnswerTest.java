package dev.sluice.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.OnStoreFailure;
import dev.sluice.Outcome;
import dev.sluice.StoreStatus;
import dev.sluice.Tier;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterUpdate;
import dev.sluice.spi.Counts;
import dev.sluice.spi.FakeClock;
import dev.sluice.spi.ReferenceCounterStore;
import dev.sluice.spi.StoreTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A store that answers past the caller's deadline: the decision is made without the counts (failing
 * open, closed or locally), and the counts the store answers late still count. A key they show over
 * its limit is refused from the deny cache, and what a request not admitted by the store was
 * counted is given back.
 */
class LateStoreAnswerTest {

  private static final Duration PERIOD = Duration.ofSeconds(10);

  /**
   * A store whose increments, while {@link #late}, time out for the caller: each is applied only
   * when the test {@link #answer}s it, and its counts are then handed to the caller's late answer.
   */
  static final class LateStore implements CounterStore {
    final ReferenceCounterStore counts = new ReferenceCounterStore();
    private final List<Runnable> waiting = new ArrayList<>();
    boolean late;
    int calls;

    @Override
    public Counts increment(List<CounterUpdate> updates) {
      calls++;
      if (!late) {
        return counts.increment(updates);
      }
      CompletableFuture<Counts> answer = new CompletableFuture<>();
      List<CounterUpdate> sent = List.copyOf(updates);
      waiting.add(() -> answer.complete(counts.increment(sent)));
      throw new StoreTimeoutException("timed out", answer);
    }

    @Override
    public void decrement(List<CounterUpdate> updates) {
      counts.decrement(updates);
    }

    /** Applies every increment that timed out, in order, and answers each late. */
    void answer() {
      List<Runnable> all = List.copyOf(waiting);
      waiting.clear();
      all.forEach(Runnable::run);
    }

    long count(long window) {
      return counts.count("r", KeySource.parse("header:X-Api-Key").prefix() + "k", 10_000, window);
    }
  }

  private static Rule rule(Algorithm algorithm, long limit, OnStoreFailure onFailure) {
    Rule.Builder b = Rule.builder("r").path("/api/**").key("header:X-Api-Key");
    if (algorithm == Algorithm.TOKEN_BUCKET) {
      // Nothing refills while the clock stands.
      b.algorithm(algorithm).tier(new Tier(limit, PERIOD, limit));
    } else {
      b.algorithm(algorithm).tier(limit, PERIOD);
    }
    b.onStoreFailure(onFailure);
    return onFailure == OnStoreFailure.LOCAL ? b.instances(2).build() : b.build();
  }

  private static RequestLimiter limiter(CounterStore store, FakeClock clock, Rule rule) {
    return RequestLimiter.builder(store)
        .rules(RuleSet.builder().rule(rule).build())
        .clock(clock)
        .build();
  }

  private static TestRequest request() {
    return TestRequest.get("/api/v1/report").header("X-Api-Key", "k");
  }

  @ParameterizedTest
  @EnumSource(
      value = Algorithm.class,
      names = {"FIXED_WINDOW", "SLIDING_WINDOW", "TOKEN_BUCKET"})
  void aFailOpenWhoseLateAnswerSpendsTheLimitIsNotRepeated(Algorithm algorithm) {
    FakeClock clock = new FakeClock();
    LateStore store = new LateStore();
    RequestLimiter l = limiter(store, clock, rule(algorithm, 3, OnStoreFailure.ALLOW));
    Outcome out = new Outcome();
    for (int i = 0; i < 3; i++) {
      assertTrue(l.decide(request(), out), "the store answers in time: " + i);
    }
    store.late = true;
    assertTrue(l.decide(request(), out), "past the timeout: failing open");
    assertEquals(StoreStatus.FAILED_OPEN, out.storeStatus());
    store.answer();
    int calls = store.calls;
    for (int i = 0; i < 5; i++) {
      assertFalse(l.decide(request(), out), "the late answer showed the limit spent: " + i);
      assertTrue(out.fromDenyCache(), "refused without asking the store");
    }
    assertEquals(calls, store.calls, "no store call, so no fail-open");
  }

  @Test
  void aRequestRefusedLocallyGivesBackWhatItsLateIncrementCounted() {
    FakeClock clock = new FakeClock();
    LateStore store = new LateStore();
    RequestLimiter l =
        limiter(store, clock, rule(Algorithm.FIXED_WINDOW, 10, OnStoreFailure.LOCAL));
    Outcome out = new Outcome();
    store.late = true;
    int admitted = 0;
    for (int i = 0; i < 8; i++) {
      admitted += l.decide(request(), out) ? 1 : 0;
      assertEquals(StoreStatus.LOCAL, out.storeStatus());
    }
    assertEquals(5, admitted, "the share of 10 over 2 instances");
    store.answer();
    long window = clock.millis() / PERIOD.toMillis();
    assertEquals(
        5,
        store.count(window),
        "the 5 admitted locally, pushed once; the late increments given back, the refused ones too");
    store.late = false;
    for (int i = 0; i < 10; i++) {
      admitted += l.decide(request(), out) ? 1 : 0;
    }
    assertEquals(10, admitted, "the window admits its whole limit, no more, no less");
    assertEquals(10, store.count(window), "5 pushed, 5 counted, the refusals given back");
  }

  @Test
  void aRequestRefusedOnATimeoutGivesBackWhatItsLateIncrementCounted() {
    FakeClock clock = new FakeClock();
    LateStore store = new LateStore();
    RequestLimiter l =
        limiter(store, clock, rule(Algorithm.FIXED_WINDOW, 2, OnStoreFailure.REJECT));
    Outcome out = new Outcome();
    store.late = true;
    assertFalse(l.decide(request(), out));
    assertEquals(StoreStatus.FAILED_CLOSED, out.storeStatus());
    store.answer();
    store.late = false;
    assertTrue(l.decide(request(), out));
    assertTrue(l.decide(request(), out), "the refused request took nothing from the limit");
    assertFalse(l.decide(request(), out));
  }
}
