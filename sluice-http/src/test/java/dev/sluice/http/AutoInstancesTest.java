package dev.sluice.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.OnStoreFailure;
import dev.sluice.Outcome;
import dev.sluice.Sync;
import dev.sluice.spi.FakeClock;
import dev.sluice.spi.ReferenceCounterStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@code instances: auto}: each instance announces itself in the store with a heartbeat, and its
 * local share while the store fails follows the fleet's live count, an instance that stopped
 * beating dropping out within three beats.
 */
class AutoInstancesTest {

  private static final Duration PERIOD = Duration.ofSeconds(60);
  private static final long BEAT = 5_000;

  /** A scheduler that runs nothing by itself: the test runs each instance's heartbeat by hand. */
  static final class ByHand extends ScheduledThreadPoolExecutor {
    final List<Runnable> due = new ArrayList<>();

    ByHand() {
      super(1);
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable task, long delay, TimeUnit unit) {
      due.add(task);
      return null;
    }

    void runDue() {
      List<Runnable> now = List.copyOf(due);
      due.clear();
      now.forEach(Runnable::run);
    }
  }

  /** Three instances on one store, each with its own path and heartbeat. */
  static final class Fleet {
    final FakeClock clock = new FakeClock();
    final ReferenceCounterStore shared = new ReferenceCounterStore();
    final List<LocalFallbackBoundTest.Flaky> paths = new ArrayList<>();
    final List<ByHand> beats = new ArrayList<>();
    final List<RequestLimiter> limiters = new ArrayList<>();
    final Outcome out = new Outcome();

    Fleet(int n, int instances) {
      Rule rule =
          Rule.builder("r")
              .path("/api/**")
              .key("header:X-Api-Key")
              .algorithm(Algorithm.FIXED_WINDOW)
              .tier(30, PERIOD)
              .onStoreFailure(OnStoreFailure.LOCAL)
              .instances(instances)
              .build();
      for (int i = 0; i < n; i++) {
        LocalFallbackBoundTest.Flaky path = new LocalFallbackBoundTest.Flaky(shared);
        ByHand beat = new ByHand();
        paths.add(path);
        beats.add(beat);
        limiters.add(
            RequestLimiter.builder(path)
                .rules(RuleSet.builder().rule(rule).build())
                .clock(clock)
                .scheduler(beat)
                .build());
      }
    }

    /** Moves time one beat on, and runs the heartbeats of the instances still alive. */
    void beat(int alive) {
      clock.advanceMillis(BEAT);
      for (int i = 0; i < alive; i++) {
        beats.get(i).runDue();
      }
    }

    /** Cuts every instance off the store, and sends {@code n} requests round robin. */
    long partitioned(int n, int alive) {
      paths.forEach(p -> p.mode = LocalFallbackBoundTest.Mode.CUT);
      long admitted = 0;
      for (int t = 0; t < n; t++) {
        admitted +=
            limiters.get(t % alive).decide(TestRequest.get("/api/x").header("X-Api-Key", "k"), out)
                ? 1
                : 0;
      }
      return admitted;
    }
  }

  @Test
  void aPartitionedFleetShares30ByTheLiveCount() {
    Fleet fleet = new Fleet(3, Sync.AUTO_INSTANCES);
    fleet.beat(3);
    fleet.beat(3);
    assertEquals(30, fleet.partitioned(120, 3), "3 live instances at 10 each");
  }

  @Test
  void withOneInstanceConfiguredEachAdmitsTheWholeLimit() {
    Fleet fleet = new Fleet(3, 1);
    fleet.beat(3);
    assertEquals(90, fleet.partitioned(120, 3), "the failing case auto fixes: 3 × 30");
  }

  @Test
  void anInstanceThatStopsBeatingDropsOutWithinThreeBeats() {
    Fleet fleet = new Fleet(3, Sync.AUTO_INSTANCES);
    fleet.beat(3);
    fleet.beat(3);
    // The third instance is gone: three beats later the other two count themselves alone.
    fleet.beat(2);
    fleet.beat(2);
    fleet.beat(2);
    long admitted = fleet.partitioned(120, 2);
    assertEquals(30, admitted, "2 live instances at 15 each");
  }

  @Test
  void aNewInstanceIsCountedWithinOneBeat() {
    Fleet fleet = new Fleet(3, Sync.AUTO_INSTANCES);
    // Only two instances beat at first; the third joins.
    fleet.beat(2);
    fleet.beat(2);
    fleet.beat(3);
    fleet.beat(3);
    long admitted = fleet.partitioned(120, 3);
    assertTrue(admitted <= 31, admitted + " admitted by three at their share of 30");
  }
}
