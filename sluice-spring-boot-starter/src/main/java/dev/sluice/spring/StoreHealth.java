package dev.sluice.spring;

import dev.sluice.OnStoreFailure;
import dev.sluice.http.RequestLimiter;
import dev.sluice.http.Rule;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterUpdate;
import dev.sluice.spi.Counts;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * What the {@code sluice} component of {@code /actuator/health} reports: whether the counter store
 * answers, and what the limiter does while it does not.
 *
 * <p>Each health check adds 1 to a probe counter in the store (rule {@code sluice:health},
 * one-second windows, so it expires within seconds) through the store's increment, as a decision
 * does, waiting at most {@link #PROBE_TIMEOUT} (a memcached store gives up sooner, at its operation
 * timeout). The status is
 *
 * <ul>
 *   <li>{@link #UP} when the store answers;
 *   <li>{@link #LOCAL} when it fails and every enabled rule then decides in this instance's memory
 *       ({@code onStoreFailure: local}, or two-layer {@code sync});
 *   <li>{@link #DOWN} when it fails and some rule lets requests through unlimited ({@code allow})
 *       or refuses them ({@code reject}).
 * </ul>
 *
 * <p>Details: {@code store} (the store and its servers), and, on a failure, {@code error} and
 * {@code onStoreFailure}: the enabled rules' ids under {@code allow}, {@code reject} and {@code
 * local}.
 *
 * <p>Spring Boot 3 and 4 name their health types apart; {@link SluiceHealthIndicator} (3) and
 * {@link SluiceBoot4HealthIndicator} (4) turn this check into each one's {@code Health}.
 */
final class StoreHealth {

  static final String UP = "UP";
  static final String DOWN = "DOWN";

  /**
   * The store fails and every rule limits locally, at its share of each limit. Not in Spring Boot's
   * default status order, so it leaves the application's status as the other components make it
   * unless {@code management.endpoint.health.status.order} names it.
   */
  static final String LOCAL = "LOCAL";

  static final String LOCAL_DESCRIPTION =
      "The counter store is failing; every rule limits in this instance";

  /** The most a health check waits for the store. */
  static final Duration PROBE_TIMEOUT = Duration.ofSeconds(1);

  /** The probe counter's rule id, one no rule is expected to have. */
  static final String PROBE_RULE = "sluice:health";

  private static final long PROBE_PERIOD_MILLIS = 1000;

  private final CounterStore store;
  private final RequestLimiter limiter;

  StoreHealth(CounterStore store, RequestLimiter limiter) {
    this.store = store;
    this.limiter = limiter;
  }

  /**
   * One check: the status code, the store, and on a failure its cause and the enabled rules' ids by
   * what each does meanwhile.
   */
  record Check(
      String status, String store, Throwable failure, Map<String, List<String>> onStoreFailure) {}

  Check check() {
    Throwable failure = probe();
    if (failure == null) {
      return new Check(UP, store.toString(), null, Map.of());
    }
    Map<String, List<String>> meanwhile = onStoreFailure();
    boolean local = meanwhile.size() == 1 && meanwhile.containsKey("local");
    return new Check(local ? LOCAL : DOWN, store.toString(), failure, meanwhile);
  }

  /** Null when the store answered the probe; else why not. */
  private Throwable probe() {
    long window = limiter.clock().millis() / PROBE_PERIOD_MILLIS;
    CounterUpdate update = new CounterUpdate(PROBE_RULE, "probe", PROBE_PERIOD_MILLIS, window, 1);
    try {
      Counts unused =
          store
              .incrementAsync(List.of(update))
              .get(PROBE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      return null;
    } catch (ExecutionException e) {
      return e.getCause() == null ? e : e.getCause();
    } catch (TimeoutException e) {
      return new TimeoutException("no answer within " + PROBE_TIMEOUT.toMillis() + "ms");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return e;
    } catch (RuntimeException e) {
      return e;
    }
  }

  /** The enabled rules' ids by what each does while the store fails. */
  private Map<String, List<String>> onStoreFailure() {
    Map<String, List<String>> out = new TreeMap<>();
    for (Rule r : limiter.rules().rules()) {
      if (!r.enabled()) {
        continue;
      }
      // A two-layer rule limits locally at its share while the store is down, whatever it says.
      OnStoreFailure mode = r.sync().isPresent() ? OnStoreFailure.LOCAL : r.onStoreFailure();
      out.computeIfAbsent(mode.name().toLowerCase(Locale.ROOT), m -> new ArrayList<>()).add(r.id());
    }
    return out;
  }
}
