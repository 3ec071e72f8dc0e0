package dev.sluice.engine;

import dev.sluice.spi.CounterStore;
import java.time.InstantSource;
import java.util.Optional;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.concurrent.ScheduledExecutorService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Finds two-layer counting ({@link TwoLayer.Provider}) once, for the engine and its policies. */
final class TwoLayerModule {

  private static final Logger LOG = LoggerFactory.getLogger(Engine.class);

  /**
   * Two-layer counting, when its module is on the class or module path: core's own loader first,
   * then the loader of the thread that first builds a limiter (a web application's, when core sits
   * in a container's shared libraries).
   */
  static final Optional<TwoLayer.Provider> PROVIDER = find();

  private TwoLayerModule() {}

  /** The local layer over {@code store}, or null without the two-layer module. */
  static TwoLayer over(
      CounterStore store, InstantSource clock, Optional<ScheduledExecutorService> scheduler) {
    return PROVIDER.map(p -> p.over(store, clock, scheduler)).orElse(null);
  }

  private static Optional<TwoLayer.Provider> find() {
    ClassLoader core = TwoLayer.class.getClassLoader();
    ClassLoader context = Thread.currentThread().getContextClassLoader();
    try {
      Optional<TwoLayer.Provider> p = ServiceLoader.load(TwoLayer.Provider.class, core).findFirst();
      if (p.isEmpty() && context != null && context != core) {
        p = ServiceLoader.load(TwoLayer.Provider.class, context).findFirst();
      }
      return p;
    } catch (ServiceConfigurationError e) {
      // A broken services entry (a provider class left out of a merged jar) costs two-layer
      // counting, which a synced limit then names at build, and nothing else.
      LOG.error("two-layer counting could not be loaded", e);
      return Optional.empty();
    }
  }
}
