package dev.sluice.store.inmemory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.Outcome;
import dev.sluice.Slots;
import dev.sluice.http.RequestLimiter;
import dev.sluice.http.Rule;
import dev.sluice.http.RuleSet;
import dev.sluice.http.TestRequest;
import dev.sluice.spi.FakeClock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/**
 * A counter of concurrency slots with a request in flight is never evicted from a full table, so a
 * client never holds more requests in flight than its limit, however many other clients arrive.
 */
class SlotsInUseTest {

  private static final int LIMIT = 2;

  private final FakeClock clock = new FakeClock(1_700_000_040_000L);

  /** A concurrency limit of 2 and a rate limit, both per API key, on {@code store}. */
  private static RequestLimiter limiter(InMemoryCounterStore store, FakeClock clock) {
    Rule inFlight =
        Rule.builder("in-flight")
            .path("/api/**")
            .key("header:X-Api-Key")
            .concurrency(LIMIT, Duration.ofSeconds(30))
            .build();
    Rule rate =
        Rule.builder("rate")
            .path("/api/**")
            .key("header:X-Api-Key")
            .algorithm(Algorithm.FIXED_WINDOW)
            .tier(1_000, Duration.ofMinutes(1))
            .build();
    return RequestLimiter.builder(store)
        .rules(RuleSet.builder().rule(inFlight).rule(rate).build())
        .clock(clock)
        .build();
  }

  private static InMemoryCounterStore store(long cap, FakeClock clock) {
    return InMemoryCounterStore.builder().maximumCounters(cap).clock(clock).build();
  }

  private static TestRequest request(String key) {
    return TestRequest.get("/api/v1/report").header("X-Api-Key", key);
  }

  @Test
  void aFloodOfBusyClientsNeverEvictsASlotInUse() {
    // A table of 4,096 counters; one client holds both its slots while 20,000 others send three
    // requests each (each a slot counter and a rate counter that outweighs a slot counter). The
    // client's slots must stay counted: every third request of its own is refused.
    InMemoryCounterStore store = store(4_096, clock);
    RequestLimiter l = limiter(store, clock);
    Outcome out = new Outcome();
    List<Slots> held = new ArrayList<>();
    for (int i = 0; i < LIMIT; i++) {
      assertTrue(l.decide(request("held"), out));
      held.add(l.slots(out));
    }
    int admittedPastTheLimit = 0;
    for (int c = 0; c < 20_000; c++) {
      for (int r = 0; r < 3; r++) {
        if (l.decide(request("flood-" + c), out)) {
          l.slots(out).release();
        }
      }
      if (c % 100 == 0 && l.decide(request("held"), out)) {
        admittedPastTheLimit++;
        l.slots(out).release();
      }
    }
    assertEquals(0, admittedPastTheLimit, "requests of the held client admitted past its 2");
    assertTrue(store.evictions().get("in-memory") > 0, "the flood did evict");
    assertTrue(store.liveCounters() <= 4_096, "within the bound: " + store.liveCounters());
    held.get(0).release();
    assertTrue(l.decide(request("held"), out), "a slot given back is free again");
    assertFalse(l.decide(request("held"), out));
  }

  @Test
  void aTableWhoseCountersAllHoldSlotsStoresNewOnesOverItsBound() {
    // 64 counters, every one with a request in flight: the 65th client is counted (and limited)
    // all the same, over the bound; once the requests complete, the bound holds again.
    InMemoryCounterStore store = store(64, clock);
    RequestLimiter l =
        RequestLimiter.builder(store)
            .rules(
                RuleSet.builder()
                    .rule(
                        Rule.builder("in-flight")
                            .path("/api/**")
                            .key("header:X-Api-Key")
                            .concurrency(LIMIT, Duration.ofSeconds(30))
                            .build())
                    .build())
            .clock(clock)
            .build();
    Outcome out = new Outcome();
    List<Slots> held = new ArrayList<>();
    for (int c = 0; c < 100; c++) {
      for (int r = 0; r < LIMIT; r++) {
        assertTrue(l.decide(request("c" + c), out), "client " + c + ", request " + r);
        held.add(l.slots(out));
      }
      assertFalse(l.decide(request("c" + c), out), "client " + c + " past its limit");
    }
    assertEquals(100, store.liveCounters(), "over the bound by the counters in use");
    assertEquals(0, store.evictions().get("in-memory"));
    held.forEach(Slots::release);
    for (int c = 0; c < 200; c++) {
      assertTrue(l.decide(request("next-" + c), out));
      l.slots(out).release();
    }
    assertTrue(store.liveCounters() <= 64, "back within the bound: " + store.liveCounters());
  }

  @Test
  void aCounterIsRetiredOnlyWhenNoSlotOfItIsInUse() {
    // Eviction marks its victim removed before its last look at the count: a counter of slots that
    // holds one stays; once its slots are given back, or have aged out, it may go.
    long w = clock.millis() / 30_000;
    Counter c =
        new Counter(
            null, new dev.sluice.spi.CounterKey().set("in-flight", "k", 30_000), true, false);
    assertTrue(c.holdsSlots(clock.millis()), "just created: its first slot is on its way");
    c.add(w, 1, new Ignored(), 0);
    assertFalse(c.retire(clock.millis()), "a slot in use");
    assertFalse(c.removed);
    c.subtract(w, 1);
    assertTrue(c.retire(clock.millis()), "no slot in use");
    assertTrue(c.removed);

    Counter aged =
        new Counter(
            null, new dev.sluice.spi.CounterKey().set("in-flight", "j", 30_000), true, false);
    aged.add(w, 1, new Ignored(), 0);
    assertFalse(aged.retire(clock.millis() + 59_999 - clock.millis() % 30_000));
    assertTrue(aged.retire(clock.millis() + 60_000), "a slot never given back ages out");

    Counter window = new Counter(null, new dev.sluice.spi.CounterKey().set("rate", "k", 30_000));
    window.add(w, 5, new Ignored(), 0);
    assertTrue(window.retire(clock.millis()), "a window counter may always be evicted");
  }

  /** A batch whose answers nobody reads. */
  private static final class Ignored implements dev.sluice.spi.CounterBatch {
    @Override
    public int size() {
      return 1;
    }

    @Override
    public String policy(int i) {
      return "r";
    }

    @Override
    public String identity(int i) {
      return "k";
    }

    @Override
    public long periodMillis(int i) {
      return 30_000;
    }

    @Override
    public long window(int i) {
      return 0;
    }

    @Override
    public long delta(int i) {
      return 1;
    }

    @Override
    public void counted(int i, long current, long previous) {}
  }

  /** One step of a run: a request of client {@code client}, or the completion of its oldest. */
  record Step(int client, boolean enter, int advanceMillis) {}

  @Provide
  Arbitrary<List<Step>> runs() {
    Arbitrary<Step> step =
        net.jqwik.api.Combinators.combine(
                Arbitraries.integers().between(0, 199),
                Arbitraries.integers().between(0, 2).map(n -> n > 0),
                // At most 20 ms a step, 1,500 steps: no slot ages out (2 × 30 s).
                Arbitraries.integers().between(0, 20))
            .as(Step::new);
    return step.list().ofMinSize(50).ofMaxSize(1_500);
  }

  @Property(tries = 100)
  void inFlightNeverExceedsTheLimitAndAClientUnderItIsAdmitted(@ForAll("runs") List<Step> run) {
    // 200 clients on a table of 64 counters: eviction all the time. A model holds each client's
    // requests in flight; the limiter must admit exactly when the model has fewer than 2.
    FakeClock clock = new FakeClock(1_700_000_040_000L);
    InMemoryCounterStore store = store(64, clock);
    RequestLimiter l = limiter(store, clock);
    Outcome out = new Outcome();
    Map<Integer, Deque<Slots>> inFlight = new HashMap<>();
    for (Step s : run) {
      clock.advanceMillis(s.advanceMillis());
      Deque<Slots> mine = inFlight.computeIfAbsent(s.client(), k -> new ArrayDeque<>());
      if (s.enter()) {
        boolean admitted = l.decide(request("client-" + s.client()), out);
        assertEquals(mine.size() < LIMIT, admitted, "client " + s.client() + " with " + mine);
        if (admitted) {
          mine.add(l.slots(out));
        }
      } else if (!mine.isEmpty()) {
        mine.poll().release();
      }
    }
  }
}
