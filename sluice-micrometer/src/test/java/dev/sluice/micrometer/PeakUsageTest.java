package dev.sluice.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.spi.FakeClock;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.distribution.CountAtBucket;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class PeakUsageTest {

  private final FakeClock clock = new FakeClock();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final PeakUsage usage =
      PeakUsage.builder(registry, "api", Duration.ofMinutes(5), 10)
          .span(Duration.ofHours(1))
          .clock(clock)
          .maxClients(100)
          .build();

  private DistributionSummary summary() {
    return registry.get("sluice.usage.peak").tag("name", "api").summary();
  }

  private double withinQuota() {
    CountAtBucket at =
        Arrays.stream(summary().takeSnapshot().histogramCounts())
            .filter(b -> b.bucket() == 10)
            .findFirst()
            .orElseThrow();
    return at.count();
  }

  private void requests(String client, int n) {
    for (int i = 0; i < n; i++) {
      usage.record(client);
    }
  }

  @Test
  void eachClientsPeakPeriodIsRecordedOncePerSpan() {
    requests("a", 3); // a: 3, then 7 in the next period: peak 7
    requests("b", 12); // b: 12, over the quota
    clock.advance(Duration.ofMinutes(5));
    requests("a", 7);
    requests("b", 1);
    assertEquals(0, summary().count(), "nothing is recorded before the span ends");

    clock.advance(Duration.ofHours(1));
    requests("c", 2); // the first request of the new span records the last span's peaks
    assertEquals(2, summary().count());
    assertEquals(12, summary().max());
    assertEquals(19, summary().totalAmount());
    assertEquals(1, withinQuota(), "one client of two stayed within the quota of 10");

    usage.flush();
    assertEquals(3, summary().count());
    assertEquals(21, summary().totalAmount());
  }

  @Test
  void periodsAreAlignedAsTheFixedWindowAlignsThem() {
    clock.advance(Duration.ofMinutes(5).minusMillis(1));
    requests("a", 4); // the last millisecond of one period
    clock.advanceMillis(1);
    requests("a", 4); // the first of the next
    usage.flush();
    assertEquals(4, summary().max());
  }

  @Test
  void clientsBeyondTheCapAreCountedAsDropped() {
    for (int i = 0; i < 120; i++) {
      usage.record("client-" + i);
    }
    assertEquals(20, registry.get("sluice.usage.dropped").counter().count());
    assertEquals(10, registry.get("sluice.usage.quota").gauge().value());
    usage.flush();
    assertEquals(100, summary().count());
  }
}
