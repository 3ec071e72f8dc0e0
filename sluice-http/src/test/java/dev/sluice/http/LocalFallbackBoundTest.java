package dev.sluice.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.OnStoreFailure;
import dev.sluice.Outcome;
import dev.sluice.Tier;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterUpdate;
import dev.sluice.spi.Counts;
import dev.sluice.spi.FakeClock;
import dev.sluice.spi.ReferenceCounterStore;
import dev.sluice.spi.StoreTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/**
 * {@code onStoreFailure: local} across a store that keeps its data and flaps, stalls or is cut off
 * from some instances: local admissions start from the store's last count and are pushed back to
 * it, so a fleet of {@code N} instances admits at most {@code N × ⌈limit ÷ N⌉ + N − 1} per window
 * ({@code limit + N − 1} when {@code N} divides the limit) when every instance loses the store, and
 * at most that plus each cut-off instance's share when only some do.
 */
class LocalFallbackBoundTest {

  private static final Duration PERIOD = Duration.ofSeconds(10);

  /** How a fault-injecting wrapper answers. */
  enum Mode {
    /** The store answers. */
    UP,
    /** Nothing reaches the store: a partition, an open breaker. */
    CUT,
    /** The increment lands, but after the client gave up: a stall past the timeout. */
    STALL
  }

  /** One instance's path to the shared store, cut or stalled at will. */
  static final class Flaky implements CounterStore {
    final CounterStore shared;
    volatile Mode mode = Mode.UP;

    Flaky(CounterStore shared) {
      this.shared = shared;
    }

    @Override
    public Counts increment(List<CounterUpdate> updates) {
      return switch (mode) {
        case UP -> shared.increment(updates);
        case CUT -> throw new IllegalStateException("cut off");
        case STALL -> {
          shared.increment(updates);
          throw new StoreTimeoutException("timed out");
        }
      };
    }

    @Override
    public void decrement(List<CounterUpdate> updates) {
      if (mode == Mode.CUT) {
        throw new IllegalStateException("cut off");
      }
      shared.decrement(updates);
    }
  }

  private static Rule rule(Algorithm algorithm, long limit, int instances) {
    Rule.Builder b = Rule.builder("r").path("/api/**").key("header:X-Api-Key");
    if (algorithm == Algorithm.TOKEN_BUCKET) {
      b.algorithm(algorithm).tier(new Tier(limit, PERIOD, limit));
    } else {
      b.algorithm(algorithm).tier(limit, PERIOD);
    }
    return b.onStoreFailure(OnStoreFailure.LOCAL).instances(instances).build();
  }

  /** A fleet of limiters on one shared store, each behind its own {@link Flaky} path. */
  static final class Fleet {
    final FakeClock clock = new FakeClock();
    final ReferenceCounterStore shared = new ReferenceCounterStore();
    final List<Flaky> paths = new ArrayList<>();
    final List<RequestLimiter> limiters = new ArrayList<>();
    final Outcome out = new Outcome();

    Fleet(Rule rule, int n) {
      for (int i = 0; i < n; i++) {
        Flaky path = new Flaky(shared);
        paths.add(path);
        limiters.add(
            RequestLimiter.builder(path)
                .rules(RuleSet.builder().rule(rule).build())
                .clock(clock)
                .build());
      }
    }

    boolean request(int i) {
      return limiters.get(i).decide(TestRequest.get("/api/v1/x").header("X-Api-Key", "k"), out);
    }

    void all(Mode mode) {
      paths.forEach(p -> p.mode = mode);
    }
  }

  /**
   * Generated traffic over a fleet whose store flaps, stalls and partitions: in every fixed window
   * the fleet admits at most {@code N × ⌈limit ÷ N⌉ + N − 1} (the shares, and one request per other
   * instance when the store is back: each instance's first push does not see the others' yet),
   * plus, for each instance that decided locally, what it could not know: the admissions the store
   * counted after its last answer to that instance, at its share ({@code ⌈unseen ÷ N⌉}, at most the
   * share). Traffic spread over the instances keeps {@code unseen} near the requests in flight; an
   * instance that never saw the counter in the window (unseen = all of it) admits its whole share.
   */
  @Property(tries = 400)
  void aFixedWindowHoldsItsBoundAcrossFlapsStallsAndPartitions(
      @ForAll @IntRange(min = 1, max = 40) int limit,
      @ForAll @IntRange(min = 1, max = 4) int n,
      @ForAll @Size(max = 300) List<@IntRange(min = 0, max = 99) Integer> steps) {
    Fleet fleet = new Fleet(rule(Algorithm.FIXED_WINDOW, limit, n), n);
    long share = ((long) limit + n - 1) / n;
    String id = KeySource.parse("header:X-Api-Key").prefix() + "k";
    Map<Long, Long> admitted = new HashMap<>();
    Map<Long, long[]> seen = new HashMap<>();
    Map<Long, long[]> unseen = new HashMap<>();
    Map<Long, Long> lag = new HashMap<>();
    long[] owed = new long[n];
    for (int v : steps) {
      long window = fleet.clock.millis() / PERIOD.toMillis();
      if (v < 70) {
        int i = v % n;
        long[] s = seen.computeIfAbsent(window, w -> new long[n]);
        long[] u = unseen.computeIfAbsent(window, w -> new long[n]);
        long stored = fleet.shared.count("r", id, PERIOD.toMillis(), window);
        boolean up = fleet.paths.get(i).mode == Mode.UP;
        if (!up) {
          u[i] = Math.max(u[i], stored - s[i]);
        }
        if (up) {
          owed[i] = 0;
        }
        if (fleet.request(i)) {
          admitted.merge(window, 1L, Long::sum);
          if (up) {
            long others = 0;
            for (long o : owed) {
              others += o;
            }
            lag.merge(window, others, Math::max);
          } else {
            owed[i]++;
          }
        }
        if (up) {
          s[i] = fleet.shared.count("r", id, PERIOD.toMillis(), window);
        }
      } else if (v < 85) {
        fleet.all(Mode.values()[v % 3]);
      } else if (v < 95) {
        fleet.paths.get(v % n).mode = Mode.values()[v % 3];
      } else {
        fleet.clock.advance(PERIOD.dividedBy(v - 93));
        if (fleet.clock.millis() / PERIOD.toMillis() != window) {
          java.util.Arrays.fill(owed, 0);
        }
      }
    }
    for (Map.Entry<Long, Long> e : admitted.entrySet()) {
      long bound = n * share + lag.getOrDefault(e.getKey(), 0L);
      for (long u : unseen.get(e.getKey())) {
        bound += Math.min(share, (u + n - 1) / n);
      }
      assertTrue(
          e.getValue() <= bound,
          "window " + e.getKey() + ": " + e.getValue() + " admitted, bound " + bound);
    }
  }

  /**
   * The reproduction: three instances, the store down and up every 100 ms for a minute, requests
   * round robin every 10 ms. Each window of 30 admits at most 32 (it admitted 60 when local counts
   * were never pushed); a token bucket of 30 per 10 s at most its exact 210 in 60 s plus 3.
   */
  @Test
  void aFlappingStoreKeepsEachWindowWithinTheLimitPlusOnePerInstance() {
    for (Algorithm algorithm :
        List.of(Algorithm.FIXED_WINDOW, Algorithm.SLIDING_WINDOW, Algorithm.TOKEN_BUCKET)) {
      Fleet fleet = new Fleet(rule(algorithm, 30, 3), 3);
      long start = fleet.clock.millis();
      Map<Long, Long> perWindow = new HashMap<>();
      long total = 0;
      for (int t = 0; t < 6_000; t++) {
        if (t % 10 == 0) {
          fleet.all((t / 10) % 2 == 0 ? Mode.UP : Mode.CUT);
        }
        if (fleet.request(t % 3)) {
          total++;
          perWindow.merge(fleet.clock.millis() / PERIOD.toMillis(), 1L, Long::sum);
        }
        fleet.clock.advanceMillis(10);
      }
      if (algorithm == Algorithm.TOKEN_BUCKET) {
        assertTrue(total <= 210 + 3, algorithm + ": " + total + " admitted in 60 s, exact 210");
        assertTrue(total >= 200, algorithm + ": " + total + " admitted in 60 s, exact 210");
        continue;
      }
      assertEquals(0, start % PERIOD.toMillis(), "the fake clock starts on a boundary");
      for (Map.Entry<Long, Long> e : perWindow.entrySet()) {
        assertTrue(e.getValue() <= 32, algorithm + ", window " + e.getKey() + ": " + e.getValue());
        assertTrue(e.getValue() >= 27, algorithm + ", window " + e.getKey() + ": " + e.getValue());
      }
    }
  }

  /**
   * A partition mid-window: the fleet admitted 24 through the store, then all three lose it. Each
   * starts from the store's 24, at a third: 2 more each, not 10; restored, the first decision of
   * each pushes its 2, so the first two see 27 and 30 and pass, the third sees 33: 32 in all.
   */
  @Test
  void aPartitionMidWindowStartsFromTheStoresCountAndPushesItBack() {
    Fleet fleet = new Fleet(rule(Algorithm.FIXED_WINDOW, 30, 3), 3);
    long admitted = 0;
    for (int t = 0; t < 24; t++) {
      admitted += fleet.request(t % 3) ? 1 : 0;
    }
    fleet.all(Mode.CUT);
    for (int t = 0; t < 30; t++) {
      admitted += fleet.request(t % 3) ? 1 : 0;
    }
    assertEquals(30, admitted, "24 by the store, 6 locally");
    fleet.all(Mode.UP);
    for (int t = 0; t < 30; t++) {
      admitted += fleet.request(t % 3) ? 1 : 0;
    }
    assertEquals(
        32, admitted, "restored, two first pushes that do not see the third's, then no more");
    long window = fleet.clock.millis() / PERIOD.toMillis();
    String id = KeySource.parse("header:X-Api-Key").prefix() + "k";
    assertTrue(fleet.shared.count("r", id, PERIOD.toMillis(), window) >= 30, "pushed");
  }
}
