package dev.sluice;

import java.time.InstantSource;

/** Builder settings that only tests make, for the engine's tests in another package. */
public final class TestSettings {

  private TestSettings() {}

  /** {@code b}, whose two-layer counters sync only when a test says so. */
  public static <B extends LimiterBuilder<B>> B syncByHand(B b) {
    b.backgroundSync = false;
    return b;
  }

  /** {@code b} with {@code clock} as the host's clock, which a store's clock corrects. */
  public static <B extends LimiterBuilder<B>> B hostClock(B b, InstantSource clock) {
    return b.hostClock(clock);
  }
}
