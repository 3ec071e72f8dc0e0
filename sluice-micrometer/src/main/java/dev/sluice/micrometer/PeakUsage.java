package dev.sluice.micrometer;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Checks a quota against real usage, continuously: is the 99.9th percentile of clients still within
 * it?
 *
 * <p>Count each client's requests with {@link #record(String)} (from a filter, or from a stage of
 * your logging pipeline). Requests are counted per {@code period}, aligned as the fixed window
 * aligns them; each client's <em>peak</em> count in any period of a {@code span} (a day by default)
 * is recorded, when the span ends, into the distribution summary {@code sluice.usage.peak} (tagged
 * {@code name}). Its histogram has a bucket at the quota, so a dashboard reads the share of clients
 * over the quota exactly, and it publishes the 50th, 99th and 99.9th percentiles. {@code
 * sluice.usage.quota} is the quota, for the same dashboard; {@code sluice.usage.dropped} counts
 * requests of clients beyond {@code maxClients} in one span, which are not tracked.
 *
 * <p>Alert when {@code sluice.usage.peak} at p99.9 approaches {@code sluice.usage.quota}: the limit
 * is about to affect more than 0.1 % of clients, and should be raised or explained. Memory: about
 * 150 bytes per client seen in the current span. Thread-safe.
 */
public final class PeakUsage {

  private final InstantSource clock;
  private final long periodMillis;
  private final long spanMillis;
  private final int maxClients;
  private final DistributionSummary peaks;
  private final Counter dropped;
  private final Map<String, Client> clients = new ConcurrentHashMap<>();
  private final AtomicLong span = new AtomicLong(Long.MIN_VALUE);

  private PeakUsage(Builder b) {
    this.clock = b.clock;
    this.periodMillis = b.period.toMillis();
    this.spanMillis = b.span.toMillis();
    this.maxClients = b.maxClients;
    Tags tags = Tags.of("name", b.name);
    this.peaks =
        DistributionSummary.builder("sluice.usage.peak")
            .description("Each client's peak requests in one period, over a span")
            .baseUnit("requests")
            .tags(tags)
            .publishPercentiles(0.5, 0.99, 0.999)
            .serviceLevelObjectives((double) b.quota)
            .distributionStatisticExpiry(b.span.multipliedBy(2))
            .distributionStatisticBufferLength(2)
            .register(b.registry);
    Gauge.builder("sluice.usage.quota", () -> (double) b.quota)
        .description("The quota the peaks are checked against")
        .tags(tags)
        .register(b.registry);
    this.dropped =
        Counter.builder("sluice.usage.dropped")
            .description("Requests of clients not tracked (over maxClients in one span)")
            .tags(tags)
            .register(b.registry);
  }

  /**
   * A builder of a check of {@code quota} per {@code period}.
   *
   * @param name tags the meters, for several quotas in one registry
   * @param period the limit's period (its counts are aligned on multiples of it)
   * @param quota the limit per period the peaks are checked against
   */
  public static Builder builder(MeterRegistry registry, String name, Duration period, long quota) {
    return new Builder(registry, name, period, quota);
  }

  /** Counts one request of {@code client}, now. */
  public void record(String client) {
    long now = clock.millis();
    long s = Math.floorDiv(now, spanMillis);
    long seen = span.get();
    if (s > seen && span.compareAndSet(seen, s)) {
      publishBefore(s);
    }
    long period = Math.floorDiv(now, periodMillis);
    while (true) {
      Client c = clients.get(client);
      if (c == null) {
        if (clients.size() >= maxClients) {
          dropped.increment();
          return;
        }
        c = clients.computeIfAbsent(client, k -> new Client(s));
      }
      synchronized (c) {
        if (c.gone) {
          continue;
        }
        if (c.span < s) {
          publish(c);
          c.span = s;
        }
        if (c.period != period) {
          c.peak = Math.max(c.peak, c.count);
          c.period = period;
          c.count = 0;
        }
        c.count++;
        return;
      }
    }
  }

  /** Records every client's peak so far, and starts a new span; for shutdown and tests. */
  public void flush() {
    publishBefore(Long.MAX_VALUE);
  }

  private void publishBefore(long s) {
    for (java.util.Iterator<Client> it = clients.values().iterator(); it.hasNext(); ) {
      Client c = it.next();
      synchronized (c) {
        if (c.span < s && !c.gone) {
          publish(c);
          c.gone = true;
          it.remove();
        }
      }
    }
  }

  /** Records the client's peak over its span; called holding its monitor. */
  private void publish(Client c) {
    long peak = Math.max(c.peak, c.count);
    if (peak > 0) {
      peaks.record((double) peak);
    }
    c.peak = 0;
    c.count = 0;
    c.period = Long.MIN_VALUE;
  }

  private static final class Client {
    long span;
    long period = Long.MIN_VALUE;
    long count;
    long peak;
    boolean gone;

    Client(long span) {
      this.span = span;
    }
  }

  /** Settings of a {@link PeakUsage}. */
  public static final class Builder {
    private final MeterRegistry registry;
    private final String name;
    private final Duration period;
    private final long quota;
    private Duration span = Duration.ofDays(1);
    private InstantSource clock = InstantSource.system();
    private int maxClients = 1_000_000;

    private Builder(MeterRegistry registry, String name, Duration period, long quota) {
      this.registry = Objects.requireNonNull(registry, "registry");
      this.name = Objects.requireNonNull(name, "name");
      this.period = Objects.requireNonNull(period, "period");
      if (period.toMillis() <= 0) {
        throw new IllegalArgumentException("period must be at least 1 ms: " + period);
      }
      if (quota <= 0) {
        throw new IllegalArgumentException("quota must be positive: " + quota);
      }
      this.quota = quota;
    }

    /** How long each client's peak is taken over before it is recorded (a day by default). */
    public Builder span(Duration span) {
      if (span.toMillis() < period.toMillis() || span.toMillis() % period.toMillis() != 0) {
        throw new IllegalArgumentException(
            "span must be a whole number of periods: " + span + " for " + period);
      }
      this.span = span;
      return this;
    }

    public Builder clock(InstantSource clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /** Clients tracked in one span at most; requests of further clients are counted as dropped. */
    public Builder maxClients(int maxClients) {
      if (maxClients < 1) {
        throw new IllegalArgumentException("maxClients must be positive: " + maxClients);
      }
      this.maxClients = maxClients;
      return this;
    }

    public PeakUsage build() {
      return new PeakUsage(this);
    }
  }
}
