package dev.sluice.shedding.adaptive;

import dev.sluice.shedding.AdaptiveCapacity;
import dev.sluice.shedding.AdaptiveCapacityProvider;
import java.util.Set;

/**
 * Names Netflix's default limits, {@code gradient2} and {@code vegas}, for the rules' {@code
 * workers: { adaptive: NAME }}; sluice-shedding finds it through {@link java.util.ServiceLoader}.
 */
public final class NetflixCapacityProvider implements AdaptiveCapacityProvider {

  /** Made by {@link java.util.ServiceLoader}. */
  public NetflixCapacityProvider() {}

  @Override
  public Set<String> names() {
    return NetflixCapacity.NAMES;
  }

  @Override
  public AdaptiveCapacity create(String name) {
    return NetflixCapacity.named(name);
  }
}
