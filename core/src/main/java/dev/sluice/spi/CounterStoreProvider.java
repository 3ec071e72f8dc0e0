package dev.sluice.spi;

import java.util.Map;
import java.util.ServiceLoader;
import java.util.Set;

/**
 * Makes a {@link CounterStore} from text settings, for adapters configured by text (a servlet
 * filter's init parameters). Stores register one through {@link ServiceLoader}, so an adapter can
 * create a store it does not depend on. Implementations are stateless.
 */
public interface CounterStoreProvider {

  /**
   * The short name.
   *
   * @return e.g. {@code memcached}, {@code redis} or {@code in-memory}
   */
  String name();

  /**
   * The class of the stores it makes, so a class name can name the store too.
   *
   * @return the stores' class
   */
  Class<? extends CounterStore> type();

  /**
   * The settings {@link #create} understands.
   *
   * @return their names, e.g. {@code servers} and {@code prefix}
   */
  Set<String> settings();

  /**
   * Makes a store.
   *
   * @param settings the settings by name, each one of {@link #settings()}
   * @return a new store, which its caller closes
   * @throws IllegalArgumentException naming the setting at fault
   */
  CounterStore create(Map<String, String> settings);

  /**
   * Makes a store named by its provider's short name or its class name, from the providers on
   * {@code loader}'s class path.
   *
   * @param name a provider's {@link #name()} or the {@link #type()}'s class name
   * @param settings the settings by name
   * @param loader where to look for providers
   * @return a new store, which its caller closes
   * @throws IllegalArgumentException when no provider has that name, a setting is unknown, or a
   *     value is bad
   */
  static CounterStore create(String name, Map<String, String> settings, ClassLoader loader) {
    StringBuilder known = new StringBuilder();
    for (CounterStoreProvider p : ServiceLoader.load(CounterStoreProvider.class, loader)) {
      if (p.name().equals(name) || p.type().getName().equals(name)) {
        for (String k : settings.keySet()) {
          if (!p.settings().contains(k)) {
            throw new IllegalArgumentException(
                "unknown setting '"
                    + k
                    + "' for the "
                    + p.name()
                    + " store (known: "
                    + new java.util.TreeSet<>(p.settings())
                    + ")");
          }
        }
        return p.create(settings);
      }
      known.append(known.length() == 0 ? "" : ", ").append(p.name());
    }
    throw new IllegalArgumentException(
        "no counter store named '"
            + name
            + "' on the class path (found: "
            + (known.length() == 0
                ? "none; add sluice-store-inmemory, sluice-store-memcached or sluice-store-redis"
                : known)
            + ")");
  }
}
