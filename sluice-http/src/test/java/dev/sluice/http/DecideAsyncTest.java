package dev.sluice.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.OnStoreFailure;
import dev.sluice.Outcome;
import dev.sluice.Slots;
import dev.sluice.spi.CounterBatch;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterUpdate;
import dev.sluice.spi.Counts;
import dev.sluice.spi.FakeClock;
import dev.sluice.spi.ReferenceCounterStore;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;

/** The non-blocking decision path decides as the blocking one does, whenever the store answers. */
class DecideAsyncTest {

  private final FakeClock clock = new FakeClock();

  private static final Rule PER_KEY =
      Rule.builder("per-key")
          .path("/api/**")
          .key("header:X-Api-Key")
          .tier(5, Duration.ofSeconds(10))
          .tier(20, Duration.ofMinutes(1))
          .build();
  private static final Rule FIXED =
      Rule.builder("fixed")
          .path("/api/reports/**")
          .key("ip")
          .algorithm(Algorithm.FIXED_WINDOW)
          .tier(7, Duration.ofSeconds(5))
          .build();

  /** A store whose asynchronous answers wait until the test releases them, in order. */
  static final class DeferredStore implements CounterStore {
    final ReferenceCounterStore counts;
    final Queue<Runnable> pending = new ArrayDeque<>();
    RuntimeException failure;

    DeferredStore(ReferenceCounterStore counts) {
      this.counts = counts;
    }

    @Override
    public Counts increment(List<CounterUpdate> updates) {
      throw new AssertionError("the asynchronous path never waits on the store");
    }

    @Override
    public void decrement(List<CounterUpdate> updates) {
      counts.decrement(updates);
    }

    @Override
    public CompletableFuture<Void> incrementAsync(CounterBatch batch) {
      CompletableFuture<Void> f = new CompletableFuture<>();
      pending.add(
          () -> {
            if (failure != null) {
              f.completeExceptionally(failure);
              return;
            }
            counts.increment(batch);
            f.complete(null);
          });
      return f;
    }

    void answer() {
      pending.remove().run();
    }
  }

  private RequestLimiter limiter(CounterStore store, Rule... rules) {
    RuleSet.Builder b = RuleSet.builder();
    for (Rule r : rules) {
      b.rule(r);
    }
    return RequestLimiter.builder(store).rules(b.build()).clock(clock).build();
  }

  private static TestRequest call(String key, String path, String ip) {
    return TestRequest.get(path).header("X-Api-Key", key).from(ip);
  }

  @Test
  void decidesAsTheBlockingPathOverGeneratedArrivals() {
    RequestLimiter blocking = limiter(new ReferenceCounterStore().clock(clock), PER_KEY, FIXED);
    RequestLimiter async = limiter(new ReferenceCounterStore().clock(clock), PER_KEY, FIXED);
    Random random = new Random(7);
    String[] paths = {"/api/reports/1", "/api/items", "/other", "/api/reports/../items"};
    for (int i = 0; i < 2_000; i++) {
      TestRequest r =
          call("k" + random.nextInt(3), paths[random.nextInt(paths.length)], "192.0.2." + i % 2);
      Outcome a = new Outcome();
      Outcome b = new Outcome();
      boolean expected = blocking.decide(r, a);
      CompletableFuture<Boolean> got = async.decideAsync(r, b).toCompletableFuture();
      assertTrue(got.isDone(), "a store answering from memory decides at once");
      assertEquals(expected, got.join(), "request " + i);
      assertEquals(a.toString(), b.toString(), "request " + i);
      clock.advance(Duration.ofMillis(random.nextInt(900)));
    }
  }

  @Test
  void decidesWhenTheStoreAnswersLater() {
    DeferredStore store = new DeferredStore(new ReferenceCounterStore().clock(clock));
    RequestLimiter l = limiter(store, PER_KEY);
    for (int i = 0; i < 5; i++) {
      Outcome out = new Outcome();
      CompletableFuture<Boolean> f =
          l.decideAsync(call("k", "/api/x", "192.0.2.1"), out).toCompletableFuture();
      assertFalse(f.isDone(), "nothing is decided before the store answers");
      store.answer();
      assertTrue(f.join());
      assertEquals(4 - i, out.remaining());
    }
    Outcome out = new Outcome();
    CompletableFuture<Boolean> refused =
        l.decideAsync(call("k", "/api/x", "192.0.2.1"), out).toCompletableFuture();
    store.answer();
    assertFalse(refused.join());
    assertTrue(out.retryAfterMillis() > 0);
    // Its key is now answered from the deny cache.
    CompletableFuture<Boolean> cached =
        l.decideAsync(call("k", "/api/x", "192.0.2.1"), new Outcome()).toCompletableFuture();
    assertTrue(cached.isDone(), "the deny cache answers without the store");
    assertFalse(cached.join());
  }

  @Test
  void aStoreFailingLaterIsDecidedByTheRulesFailureSetting() {
    DeferredStore store = new DeferredStore(new ReferenceCounterStore().clock(clock));
    store.failure = new IllegalStateException("down");
    Rule closed = PER_KEY.toBuilder().onStoreFailure(OnStoreFailure.REJECT).build();
    Outcome open = new Outcome();
    CompletableFuture<Boolean> a =
        limiter(store, PER_KEY)
            .decideAsync(call("k", "/api/x", "192.0.2.1"), open)
            .toCompletableFuture();
    store.answer();
    assertTrue(a.join(), "fails open by default");
    assertTrue(open.storeFailed());
    Outcome shut = new Outcome();
    CompletableFuture<Boolean> b =
        limiter(store, closed)
            .decideAsync(call("k", "/api/x", "192.0.2.1"), shut)
            .toCompletableFuture();
    store.answer();
    assertFalse(b.join(), "fails closed when the rule says reject");
    assertEquals(503, RateLimitHeaders.status(shut));
  }

  /** What an adapter writes from an admission: its headers, slots and refusal. */
  static final class Recorded {
    final Map<String, String> headers = new HashMap<>();
    int status;
    String body;
    Slots held;
    final boolean proceeds;

    Recorded(Admission a) {
      if (a.slots().holds()) {
        held = a.slots();
      }
      a.writeHeaders(headers::put);
      proceeds = !a.refused();
      if (!proceeds) {
        status = a.status();
        body = a.problem();
      }
    }
  }

  @Test
  void admitsAndRefusesAsTheBlockingAdmission() throws Exception {
    Rule slots =
        Rule.builder("in-flight")
            .path("/api/**")
            .key("header:X-Api-Key")
            .concurrency(1, Duration.ofSeconds(30))
            .build();
    DeferredStore store = new DeferredStore(new ReferenceCounterStore().clock(clock));
    RequestLimiter async = limiter(store, PER_KEY, slots);
    RequestLimiter blocking = limiter(new ReferenceCounterStore().clock(clock), PER_KEY, slots);
    for (int i = 0; i < 3; i++) {
      TestRequest r = call("k", "/api/x", "192.0.2.1");
      Recorded a = new Recorded(Admission.decide(blocking, r));
      CompletionStage<Admission> got = Admission.decideAsync(async, r);
      assertFalse(got.toCompletableFuture().isDone());
      store.answer();
      Recorded b = new Recorded(got.toCompletableFuture().join());
      assertEquals(a.proceeds, b.proceeds);
      assertEquals(a.headers.keySet(), b.headers.keySet());
      assertEquals(a.status, b.status);
      assertEquals(a.body, b.body);
      assertEquals(a.held == null, b.held == null);
      if (i == 0) {
        assertTrue(b.held.holds(), "the first holds the only slot");
      } else {
        assertNull(b.held);
        assertEquals(429, b.status);
      }
    }
  }

  @Test
  void updatesOfTheStoreStayWhatTheBlockingPathSends() {
    // The asynchronous path counts through the same batch: one store call per decision.
    ReferenceCounterStore counts = new ReferenceCounterStore().clock(clock);
    DeferredStore store = new DeferredStore(counts);
    RequestLimiter l = limiter(store, PER_KEY, FIXED);
    CompletableFuture<Boolean> f =
        l.decideAsync(call("k", "/api/reports/1", "192.0.2.9"), new Outcome())
            .toCompletableFuture();
    assertEquals(1, store.pending.size(), "one store call for two rules and three tiers");
    store.answer();
    assertTrue(f.join());
  }
}
