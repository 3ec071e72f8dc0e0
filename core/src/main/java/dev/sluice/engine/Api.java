package dev.sluice.engine;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.LimiterBuilder;
import dev.sluice.Outcome;
import dev.sluice.Slots;
import dev.sluice.Tier;
import dev.sluice.algorithm.TierLimit;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterUpdate;
import java.util.List;

/**
 * What the engine reads and makes of the API's types without their package-private parts being
 * public: an engine of a builder's settings, an algorithm's counting of a tier, an outcome's
 * answer, a decision of an answer, and slots. {@link LimiterBuilder}'s class sets it once, when it
 * is initialized, so it is set before any engine exists.
 */
public abstract class Api {

  private static volatile Api api;

  /** For {@link LimiterBuilder} alone. */
  protected Api() {}

  /**
   * Sets the one bridge; for {@link LimiterBuilder}'s class initializer alone.
   *
   * @throws IllegalStateException if it is set already
   */
  public static void set(Api bridge) {
    if (api != null) {
      throw new IllegalStateException("set already");
    }
    api = bridge;
  }

  /** An engine of {@code settings}. */
  static Engine engine(LimiterBuilder<?> settings) {
    return api.engineOf(settings);
  }

  /** One tier under {@code algorithm}. */
  static TierLimit limit(Algorithm algorithm, Tier tier, boolean staggered) {
    return api.limitOf(algorithm, tier, staggered);
  }

  /** The answer {@code out} reads. */
  static Answer answer(Outcome out) {
    return api.answerOf(out);
  }

  /** A decision of {@code copy}, an answer nothing else holds. */
  static Decision decision(Answer copy) {
    return api.decisionOf(copy);
  }

  /** Slots that give {@code held} back to {@code store}. */
  static Slots slots(CounterStore store, List<CounterUpdate> held) {
    return api.slotsOf(store, held);
  }

  /** {@code slots}, and {@code exit} run once when they are released. */
  static Slots with(Slots slots, Runnable exit) {
    return api.slotsWith(slots, exit);
  }

  protected abstract Engine engineOf(LimiterBuilder<?> settings);

  protected abstract TierLimit limitOf(Algorithm algorithm, Tier tier, boolean staggered);

  protected abstract Answer answerOf(Outcome out);

  protected abstract Decision decisionOf(Answer copy);

  protected abstract Slots slotsOf(CounterStore store, List<CounterUpdate> held);

  protected abstract Slots slotsWith(Slots slots, Runnable exit);
}
