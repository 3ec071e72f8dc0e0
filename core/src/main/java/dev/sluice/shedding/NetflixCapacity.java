package dev.sluice.shedding;

import com.netflix.concurrency.limits.Limit;

/**
 * A Netflix {@link Limit} (Vegas, Gradient2…) as the worker shedder's capacity. Kept apart so the
 * optional {@code concurrency-limits-core} is loaded only by those who use it.
 */
final class NetflixCapacity implements LoadShedder.Capacity {

  private final Limit limit;

  private NetflixCapacity(Limit limit) {
    this.limit = limit;
  }

  static LoadShedder.Capacity of(Limit limit) {
    return new NetflixCapacity(java.util.Objects.requireNonNull(limit, "limit"));
  }

  /** Netflix's default {@code gradient2} or {@code vegas} limit. */
  static LoadShedder.Capacity named(String name) {
    return switch (name) {
      case "gradient2" -> of(com.netflix.concurrency.limits.limit.Gradient2Limit.newDefault());
      case "vegas" -> of(com.netflix.concurrency.limits.limit.VegasLimit.newDefault());
      default ->
          throw new IllegalArgumentException(
              "unknown adaptive limit '" + name + "' (use gradient2 or vegas)");
    };
  }

  @Override
  public int capacity() {
    return limit.getLimit();
  }

  @Override
  public void sample(long startNanos, long rttNanos, int inFlight) {
    limit.onSample(startNanos, rttNanos, inFlight, false);
  }
}
