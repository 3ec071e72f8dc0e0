package dev.sluice.shedding;

/**
 * An estimate of this instance's capacity, in requests in flight, that learns from each completed
 * request: what the worker shedder divides the requests in flight by when the worker count is not
 * known. {@code sluice-shedding-adaptive} makes them from Netflix's adaptive limits ({@code
 * gradient2}, {@code vegas}); see {@link LoadShedder.Builder#adaptive(AdaptiveCapacity)}.
 * Implementations are thread-safe.
 */
public interface AdaptiveCapacity {

  /**
   * The current estimate.
   *
   * @return how many requests this instance can have in flight now, at least 1 for any use
   */
  int capacity();

  /**
   * Learns from a completed request.
   *
   * @param startNanos when the request was admitted, by {@link System#nanoTime()}
   * @param rttNanos how long it took
   * @param inFlight the requests in flight when it completed, itself included
   */
  void sample(long startNanos, long rttNanos, int inFlight);
}
