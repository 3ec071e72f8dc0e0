package dev.sluice;

import java.util.List;

/**
 * Told of every decision a {@link RateLimiter} or {@code dev.sluice.http.RequestLimiter} makes, for
 * metrics and logs. Called on the request thread: keep it fast, and do not throw.
 */
public interface DecisionListener {

  DecisionListener NONE = (rules, decision, storeNanos) -> {};

  /**
   * Told of one decision.
   *
   * @param rules the ids of the rules that applied, in order
   * @param decision the decision
   * @param storeNanos how long the store call took, or -1 when there was none (a cached reject)
   */
  void onDecision(List<String> rules, Decision decision, long storeNanos);

  /**
   * Told when a decision failed with an exception: a key source or quota resolver that threw (its
   * rule is left out, or refuses the request when it rejects on failure, and the other rules
   * decide), or a bug (the request is decided as on a store failure). Does nothing by default.
   */
  default void onError(Throwable error) {}

  /**
   * Told when a load shedder refused a request with a 503: {@code shedder} is {@code "fleet-usage"}
   * or {@code "worker-utilization"} (the names {@code dev.sluice.shedding.LoadShedder} gives its
   * two shedders). Does nothing by default.
   */
  default void onShed(String priorityClass, String shedder) {}

  /**
   * A load signal read NaN or infinite and was ignored ({@code source}: {@code
   * worker-utilization}); the shedder kept its amount. Does nothing by default.
   */
  default void onIgnoredSignal(String source) {}

  /**
   * The store's clock was measured again and differs from this host's by {@code offsetMillis} (the
   * store's minus this host's), within {@code errorMillis}; decisions read the store's clock
   * ({@link dev.sluice.spi.StoreClock#millis}). Told on a decision's thread when the offset
   * changes. Does nothing by default.
   */
  default void onClockOffset(long offsetMillis, long errorMillis) {}
}
