package dev.sluice.micrometer;

import dev.sluice.Decision;
import dev.sluice.DecisionListener;
import dev.sluice.Quota;
import dev.sluice.StoreStatus;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Counts decisions in Micrometer: {@code sluice.requests} tagged {@code rule} and {@code outcome}
 * ({@code allowed}, {@code rejected}, {@code shadow-rejected}, {@code failed-open}, {@code
 * failed-closed}), counts the limiter's own failures (a key source or quota resolver that threw) as
 * {@code sluice.errors} tagged {@code exception}, counts requests a load shedder refused (503) as
 * {@code sluice.shed} tagged {@code class} (the priority class) and {@code shedder} ({@code
 * fleet-usage}, {@code worker-utilization}), counts decisions made in this instance's memory while
 * the store failed ({@code onStoreFailure: local}) as {@code sluice.decisions.local} tagged {@code
 * rule}, times store calls as {@code sluice.store.calls}, and shows the store's clock minus this
 * host's, as last measured, as the gauge {@code sluice.clock.offset} (milliseconds; registered once
 * a store's clock was measured). micrometer-core comes with this module. Thread-safe.
 */
public final class MicrometerListener implements DecisionListener {

  private final MeterRegistry registry;
  private final Timer storeCalls;
  private final Map<String, Counter> counters = new ConcurrentHashMap<>();
  private final AtomicLong clockOffset = new AtomicLong();
  private final AtomicBoolean clockGauge = new AtomicBoolean();

  public MicrometerListener(MeterRegistry registry) {
    this.registry = registry;
    this.storeCalls =
        Timer.builder("sluice.store.calls")
            .description("Counter store calls, one per decision")
            .register(registry);
  }

  @Override
  public void onDecision(List<String> rules, Decision d, long storeNanos) {
    if (storeNanos >= 0) {
      storeCalls.record(storeNanos, TimeUnit.NANOSECONDS);
    }
    if (d.storeStatus() == StoreStatus.LOCAL) {
      for (String rule : rules) {
        increment(
            "\u0004" + rule,
            () ->
                Counter.builder("sluice.decisions.local")
                    .description(
                        "Decisions made by this instance's local counters while the store failed")
                    .tag("rule", rule));
      }
    }
    if (d.fromDenyCache()) {
      count(d.policy(), "rejected");
      return;
    }
    for (String rule : rules) {
      count(rule, outcome(rule, d));
    }
  }

  @Override
  public void onError(Throwable error) {
    String type = error.getClass().getSimpleName();
    increment(
        "\u0001" + type,
        () ->
            Counter.builder("sluice.errors")
                .description(
                    "Exceptions inside decisions: a key or quota resolver that threw, a bug")
                .tag("exception", type));
  }

  @Override
  public void onShed(String priorityClass, String shedder) {
    increment(
        "\u0002" + priorityClass + '\u0000' + shedder,
        () ->
            Counter.builder("sluice.shed")
                .description("Requests refused with a 503 by a load shedder, by priority class")
                .tag("class", priorityClass)
                .tag("shedder", shedder));
  }

  private static String outcome(String rule, Decision d) {
    if (d.storeStatus() == StoreStatus.FAILED_OPEN) {
      return "failed-open";
    }
    if (d.storeStatus() == StoreStatus.FAILED_CLOSED) {
      return "failed-closed";
    }
    for (Quota q : d.quotas()) {
      if (q.policy().equals(rule) && q.exceeded()) {
        return q.shadow() ? "shadow-rejected" : "rejected";
      }
    }
    return "allowed";
  }

  private void count(String rule, String outcome) {
    increment(
        rule + '\u0000' + outcome,
        () ->
            Counter.builder("sluice.requests")
                .description("Rate-limited requests by rule and outcome")
                .tag("rule", rule)
                .tag("outcome", outcome));
  }

  @Override
  public void onIgnoredSignal(String source) {
    increment(
        "\u0003" + source,
        () ->
            Counter.builder("sluice.signals.ignored")
                .description("Load signal samples that read NaN or infinite and were ignored")
                .tag("signal", source));
  }

  @Override
  public void onClockOffset(long offsetMillis, long errorMillis) {
    clockOffset.set(offsetMillis);
    if (clockGauge.compareAndSet(false, true)) {
      Gauge.builder("sluice.clock.offset", clockOffset, AtomicLong::doubleValue)
          .description("The store's clock minus this host's, as last measured")
          .baseUnit("milliseconds")
          .register(registry);
    }
  }

  /** Increments the counter kept under {@code key}, registered from {@code meter} on first use. */
  private void increment(String key, Supplier<Counter.Builder> meter) {
    counters.computeIfAbsent(key, k -> meter.get().register(registry)).increment();
  }
}
