package dev.sluice.shedding.adaptive;

import com.netflix.concurrency.limits.Limit;
import com.netflix.concurrency.limits.limit.Gradient2Limit;
import com.netflix.concurrency.limits.limit.VegasLimit;
import dev.sluice.shedding.AdaptiveCapacity;
import java.util.Objects;
import java.util.Set;

/**
 * A Netflix {@link Limit} (Gradient2, Vegas…) as the worker shedder's capacity: {@code
 * LoadShedder.builder().adaptive(NetflixCapacity.of(Gradient2Limit.newBuilder()…build()))}.
 */
public final class NetflixCapacity implements AdaptiveCapacity {

  /** The names {@link #named} knows. */
  static final Set<String> NAMES = Set.of("gradient2", "vegas");

  private final Limit limit;

  private NetflixCapacity(Limit limit) {
    this.limit = limit;
  }

  /**
   * The capacity {@code limit} estimates.
   *
   * @param limit a limit no one else samples
   * @return its estimate, which learns from each request the shedder completes
   */
  public static AdaptiveCapacity of(Limit limit) {
    return new NetflixCapacity(Objects.requireNonNull(limit, "limit"));
  }

  /**
   * Netflix's default {@code gradient2} or {@code vegas} limit.
   *
   * @param name {@code gradient2} or {@code vegas}
   * @return a new estimate
   * @throws IllegalArgumentException for another name
   */
  public static AdaptiveCapacity named(String name) {
    return switch (name) {
      case "gradient2" -> of(Gradient2Limit.newDefault());
      case "vegas" -> of(VegasLimit.newDefault());
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
