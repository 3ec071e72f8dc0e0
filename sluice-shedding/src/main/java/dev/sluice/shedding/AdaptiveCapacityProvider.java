package dev.sluice.shedding;

import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeSet;

/**
 * Makes {@link AdaptiveCapacity adaptive capacities} by name, for the rules' {@code workers: {
 * adaptive: NAME }}. Registered through {@link ServiceLoader}, so the shedder finds the estimates
 * of a module it does not depend on ({@code sluice-shedding-adaptive}). Implementations are
 * stateless.
 */
public interface AdaptiveCapacityProvider {

  /**
   * The names this provider knows.
   *
   * @return for example {@code gradient2} and {@code vegas}
   */
  Set<String> names();

  /**
   * Makes a new estimate, in its default settings.
   *
   * @param name one of {@link #names()}
   * @return an estimate no one else holds
   * @throws IllegalArgumentException for a name not in {@link #names()}
   */
  AdaptiveCapacity create(String name);

  /**
   * Makes a new estimate named {@code name} by the providers {@code loader} finds.
   *
   * @param name the estimate's name, such as {@code gradient2}
   * @param loader where to look for providers
   * @return a new estimate from the first provider that knows the name
   * @throws IllegalStateException when no provider is found at all (add {@code
   *     sluice-shedding-adaptive})
   * @throws IllegalArgumentException when providers are found but none knows the name
   */
  static AdaptiveCapacity find(String name, ClassLoader loader) {
    Set<String> known = new TreeSet<>();
    for (AdaptiveCapacityProvider p : ServiceLoader.load(AdaptiveCapacityProvider.class, loader)) {
      if (p.names().contains(name)) {
        return p.create(name);
      }
      known.addAll(p.names());
    }
    if (known.isEmpty()) {
      throw new IllegalStateException(
          "the adaptive limit '"
              + name
              + "' needs dev.sluice:sluice-shedding-adaptive on the class path");
    }
    throw new IllegalArgumentException(
        "unknown adaptive limit '" + name + "' (known: " + String.join(", ", known) + ")");
  }
}
