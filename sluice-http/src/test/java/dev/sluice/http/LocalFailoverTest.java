package dev.sluice.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code onStoreFailure: local} across a failover that loses writes, as Redis's asynchronous
 * replication may: the promoted replica's count is lower than what the instance had from the old
 * master and admitted in memory since. Within a window the instance judges on no less than what it
 * admitted itself, so the store that went back does not give it its limit again.
 */
class LocalFailoverTest {

  private static final Duration PERIOD = Duration.ofSeconds(10);
  private static final int LIMIT = 100;

  /**
   * A master and its replica: every write reaches the master, and the replica too until {@link
   * #lag}; {@link #promote} makes the replica the master, losing what it did not get.
   */
  static final class Replicated implements CounterStore {
    final ReferenceCounterStore primary = new ReferenceCounterStore();
    final ReferenceCounterStore replica = new ReferenceCounterStore();
    volatile CounterStore master = primary;
    volatile boolean replicating = true;
    volatile boolean down;

    @Override
    public Counts increment(List<CounterUpdate> updates) {
      if (down) {
        throw new IllegalStateException("master down");
      }
      Counts counts = master.increment(updates);
      if (master == primary && replicating) {
        replica.increment(updates);
      }
      return counts;
    }

    @Override
    public void decrement(List<CounterUpdate> updates) {
      if (down) {
        throw new IllegalStateException("master down");
      }
      master.decrement(updates);
      if (master == primary && replicating) {
        replica.decrement(updates);
      }
    }

    /** The replica stops receiving writes: what the master acknowledges from now on may be lost. */
    void lag() {
      replicating = false;
    }

    /** The replica is promoted and answers, without the writes it missed. */
    void promote() {
      master = replica;
      down = false;
    }
  }

  private static RequestLimiter limiter(CounterStore store, FakeClock clock, Algorithm algorithm) {
    Rule.Builder b = Rule.builder("r").path("/api/**").key("header:X-Api-Key");
    if (algorithm == Algorithm.TOKEN_BUCKET) {
      // A bucket of LIMIT refilled at LIMIT per 10 s: nothing refills while the clock stands.
      b.algorithm(algorithm).tier(new Tier(LIMIT, PERIOD, LIMIT));
    } else {
      b.algorithm(algorithm).tier(LIMIT, PERIOD);
    }
    Rule rule = b.onStoreFailure(OnStoreFailure.LOCAL).instances(1).build();
    return RequestLimiter.builder(store)
        .rules(RuleSet.builder().rule(rule).build())
        .clock(clock)
        .build();
  }

  private static long send(RequestLimiter l, int requests, StoreStatus expected) {
    return send(l, "k", requests, expected);
  }

  private static long send(RequestLimiter l, String key, int requests, StoreStatus expected) {
    Outcome out = new Outcome();
    long admitted = 0;
    for (int i = 0; i < requests; i++) {
      admitted += l.decide(TestRequest.get("/api/v1/report").header("X-Api-Key", key), out) ? 1 : 0;
      assertEquals(expected, out.storeStatus(), "request " + i);
    }
    return admitted;
  }

  private static final Algorithm[] WINDOWED = {
    Algorithm.FIXED_WINDOW, Algorithm.SLIDING_WINDOW, Algorithm.TOKEN_BUCKET
  };

  @Test
  void writesLostInTheFailoverDoNotGiveTheInstanceItsLimitAgain() {
    for (Algorithm algorithm : WINDOWED) {
      FakeClock clock = new FakeClock();
      Replicated store = new Replicated();
      RequestLimiter l = limiter(store, clock, algorithm);
      long admitted = send(l, 43, StoreStatus.OK);
      store.lag();
      admitted += send(l, 17, StoreStatus.OK);
      store.down = true;
      admitted += send(l, 41, StoreStatus.LOCAL);
      assertEquals(LIMIT, admitted, algorithm + ": 60 through the store, 40 in memory");
      store.promote();
      long after = send(l, 50, StoreStatus.OK);
      assertEquals(0, after, algorithm + ": the replica lost 17, the instance admitted 100");
    }
  }

  @Test
  void aPushLostInTheFailoverDoesNotGiveTheInstanceItsLimitAgain() {
    for (Algorithm algorithm : WINDOWED) {
      FakeClock clock = new FakeClock();
      Replicated store = new Replicated();
      RequestLimiter l = limiter(store, clock, algorithm);
      long admitted = send(l, 43, StoreStatus.OK);
      store.lag();
      store.down = true;
      admitted += send(l, 58, StoreStatus.LOCAL);
      assertEquals(LIMIT, admitted, algorithm + ": 43 through the store, 57 in memory");
      store.down = false;
      // The old master answers another client's request and takes the push of the 57 after it.
      assertEquals(1, send(l, "other", 1, StoreStatus.OK), algorithm + ": another client");
      store.promote();
      long after = send(l, 50, StoreStatus.OK);
      assertEquals(0, after, algorithm + ": the replica has 43, the instance admitted 100");
    }
  }

  @Test
  void theNextWindowAdmitsTheLimitAgainAfterAFailover() {
    FakeClock clock = new FakeClock();
    Replicated store = new Replicated();
    RequestLimiter l = limiter(store, clock, Algorithm.FIXED_WINDOW);
    send(l, 43, StoreStatus.OK);
    store.lag();
    store.down = true;
    send(l, 58, StoreStatus.LOCAL);
    store.promote();
    assertEquals(0, send(l, 10, StoreStatus.OK), "the window of the failover is spent");
    clock.advance(PERIOD);
    assertEquals(LIMIT, send(l, LIMIT + 5, StoreStatus.OK), "the next window has its limit");
  }
}
