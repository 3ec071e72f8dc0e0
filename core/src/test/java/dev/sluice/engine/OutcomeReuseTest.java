package dev.sluice.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Outcome;
import dev.sluice.RateLimiter;
import dev.sluice.Tier;
import dev.sluice.spi.FakeClock;
import dev.sluice.spi.ReferenceCounterStore;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * An outcome reused from decision to decision keeps its counters laid out and the deny-cache
 * entries it found while the same policies and identities come back: its answers must be those of a
 * new outcome each time, however the policies that apply come and go.
 */
class OutcomeReuseTest {

  private record Side(FakeClock clock, Engine engine, Policy perKey, Policy perCustomer) {
    static Side create() {
      FakeClock clock = new FakeClock();
      Engine engine = Engine.of(RateLimiter.fixedWindow(new ReferenceCounterStore()).clock(clock));
      return new Side(
          clock,
          engine,
          engine.policy(
              "per-key",
              Algorithm.FIXED_WINDOW,
              List.of(new Tier(3, Duration.ofSeconds(1)), new Tier(10, Duration.ofSeconds(10))),
              false,
              false,
              false),
          engine.policy(
              "per-customer",
              Algorithm.SLIDING_WINDOW,
              List.of(new Tier(5, Duration.ofSeconds(2))),
              false,
              false,
              false));
    }

    boolean decide(Outcome out, int shape, String key, String customer) {
      engine.begin(out);
      if (shape != 1) {
        engine.add(out, perKey, key);
      }
      if (shape != 0) {
        engine.add(out, perCustomer, customer);
      }
      if (shape == 3) {
        engine.add(out, perKey, key);
      }
      return engine.decide(out, 1);
    }
  }

  @Test
  void aReusedOutcomeDecidesAsANewOneWhilePoliciesComeAndGo() {
    Random random = new Random(11);
    Side reused = Side.create();
    Side fresh = Side.create();
    Outcome out = new Outcome();
    // Both policies count the same identities, so that a policy can change alone.
    String[] keys = {"a", "b"};
    String[] customers = keys;
    int rejected = 0;
    for (int i = 0; i < 20_000; i++) {
      long step = random.nextInt(60);
      reused.clock().advanceMillis(step);
      fresh.clock().advanceMillis(step);
      // 0: per-key alone; 1: per-customer alone; 2: both; 3: both, then per-key again.
      int shape = random.nextInt(4);
      String key = keys[random.nextInt(2)];
      String customer = customers[random.nextInt(2)];
      Outcome expected = new Outcome();
      boolean allowed = fresh.decide(expected, shape, key, customer);
      String what = "request " + i + " (shape " + shape + ")";
      assertEquals(allowed, reused.decide(out, shape, key, customer), what);
      assertEquals(expected.policy(), out.policy(), what);
      assertEquals(expected.remaining(), out.remaining(), what);
      assertEquals(expected.retryAfterMillis(), out.retryAfterMillis(), what);
      rejected += allowed ? 0 : 1;
    }
    assertTrue(rejected > 3_000, "the schedule must exercise rejections: " + rejected);
  }

  @Test
  void aDecisionKeepsItsFiguresWhateverIsWrittenIntoItsOutcomeOrTheOneItCameFrom() {
    Random random = new Random(12);
    Side side = Side.create();
    Outcome out = new Outcome();
    Decision last = null;
    String lastQuotas = "";
    String lastIetf = "";
    int rejected = 0;
    for (int i = 0; i < 5_000; i++) {
      side.clock().advanceMillis(random.nextInt(60));
      int shape = random.nextInt(4);
      String key = random.nextBoolean() ? "a" : "b";
      rejected += side.decide(out, shape, key, key) ? 0 : 1;
      if (last != null) {
        String what = "decision before request " + i;
        assertEquals(lastQuotas, last.quotas().toString(), what);
        assertEquals(lastIetf, last.outcome().ietfPolicy() + " | " + last.outcome().ietfState());
      }
      Decision d = out.toDecision().orElseThrow();
      assertEquals(out.quotas().toString(), d.quotas().toString());
      assertEquals(
          out.ietfPolicy() + " | " + out.ietfState(),
          d.outcome().ietfPolicy() + " | " + d.outcome().ietfState());
      // A decision's outcome is the caller's own copy: deciding into it is allowed, and changes
      // nothing the decision says.
      side.decide(d.outcome(), 3 - shape, key, key);
      last = d;
      lastQuotas = d.quotas().toString();
      lastIetf = d.outcome().ietfPolicy() + " | " + d.outcome().ietfState();
    }
    assertTrue(rejected > 500, "the schedule must exercise rejections: " + rejected);
  }
}
