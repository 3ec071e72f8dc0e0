package dev.sluice.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.http.RequestInfo;
import dev.sluice.http.RequestLimiter;
import dev.sluice.http.TestRequest;
import dev.sluice.spi.FakeClock;
import dev.sluice.spi.ReferenceCounterStore;
import dev.sluice.yaml.YamlRules;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

class MicrometerListenerTest {

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final ReferenceCounterStore store = new ReferenceCounterStore();

  private double count(String rule, String outcome) {
    var c = registry.find("sluice.requests").tag("rule", rule).tag("outcome", outcome).counter();
    return c == null ? 0 : c.count();
  }

  private static RequestInfo request(String ip) {
    return TestRequest.get("/x").from(ip);
  }

  @Test
  void countsEachRulesOutcomeAndTimesStoreCalls() {
    RequestLimiter l =
        RequestLimiter.builder(store)
            .clock(new FakeClock())
            .listener(new MicrometerListener(registry))
            .rules(
                YamlRules.parse(
                    """
            defaults: { key: ip }
            rules:
              - { id: strict, tiers: [ { limit: 2, period: 1m } ] }
              - { id: dark, shadow: true, tiers: [ { limit: 1, period: 1m } ] }
            """,
                    "m.yaml"))
            .build();
    for (int i = 0; i < 4; i++) {
      assertTrue(l.decide(request("192.0.2.9")).isPresent());
    }
    assertEquals(2, count("strict", "allowed"));
    assertEquals(2, count("strict", "rejected"), "one counted by the store, one by the deny cache");
    assertEquals(1, count("dark", "allowed"));
    assertEquals(
        2, count("dark", "shadow-rejected"), "requests 2 and 3; the 4th never reached the store");
    assertEquals(
        3,
        registry.find("sluice.store.calls").timer().count(),
        "the cached reject made no store call");
    store.failWith(new IllegalStateException("down"));
    assertTrue(l.decide(request("192.0.2.10")).isPresent());
    assertEquals(1, count("strict", "failed-open"));
    assertEquals(1, count("dark", "failed-open"));
  }

  @Test
  void theStoresClockOffsetIsAGaugeOnceMeasured() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    MicrometerListener listener = new MicrometerListener(registry);
    assertTrue(
        registry.find("sluice.clock.offset").gauges().isEmpty(), "none before a measurement");
    listener.onClockOffset(-30_119, 2);
    assertEquals(-30_119, registry.get("sluice.clock.offset").gauge().value());
    listener.onClockOffset(-30_121, 1);
    assertEquals(-30_121, registry.get("sluice.clock.offset").gauge().value());
  }

  @Test
  void aShedRequestIsCountedByClassAndShedder() {
    RequestLimiter l =
        RequestLimiter.builder(store)
            .clock(new FakeClock())
            .listener(new MicrometerListener(registry))
            .rules(
                YamlRules.parse(
                    """
            loadShedding: { fleet: { capacity: 1, reserve: 0 } }
            rules: []
            """,
                    "shed.yaml"))
            .build();
    dev.sluice.Outcome held = new dev.sluice.Outcome();
    assertTrue(l.decide(request("192.0.2.11"), held));
    var slots = l.slots(held);
    dev.sluice.Outcome out = new dev.sluice.Outcome();
    assertTrue(!l.decide(request("192.0.2.12"), out) && out.shed());
    var shed =
        registry.find("sluice.shed").tag("class", "reads").tag("shedder", "fleet-usage").counter();
    assertEquals(1, shed == null ? 0 : shed.count());
    slots.release();
  }

  @Test
  void aFailureInsideADecisionIsCountedAndFailsOpen() {
    RequestLimiter l =
        RequestLimiter.builder(store)
            .clock(new FakeClock())
            .listener(new MicrometerListener(registry))
            .quotaResolver(
                (request, rule) -> {
                  throw new IllegalStateException("resolver bug");
                })
            .rules(
                YamlRules.parse(
                    "rules: [ { id: r, key: [ip], tiers: [ { limit: 1, period: 1m } ] } ]\n",
                    "e.yaml"))
            .build();
    for (int i = 0; i < 3; i++) {
      assertTrue(l.decide(request("192.0.2.11")).orElseThrow().allowed());
    }
    assertEquals(
        3,
        registry.find("sluice.errors").tag("exception", "IllegalStateException").counter().count());
    assertEquals(3, count("r", "failed-open"));
  }

  @Test
  void decisionsMadeLocallyAreCountedPerRule() {
    RequestLimiter l =
        RequestLimiter.builder(store)
            .clock(new FakeClock())
            .listener(new MicrometerListener(registry))
            .rules(
                YamlRules.parse(
                    """
            defaults: { key: ip, onStoreFailure: local, instances: 2 }
            rules: [ { id: r, tiers: [ { limit: 4, period: 1m } ] } ]
            """,
                    "l.yaml"))
            .build();
    assertTrue(l.decide(request("192.0.2.12")).orElseThrow().allowed());
    store.failWith(new IllegalStateException("down"));
    for (int i = 0; i < 3; i++) {
      l.decide(request("192.0.2.12"));
    }
    assertEquals(
        3, registry.find("sluice.decisions.local").tag("rule", "r").counter().count(), "per rule");
    assertEquals(
        2,
        count("r", "allowed"),
        "one by the store, one locally (the share of 4 / 2, from the store's 1 at half)");
    assertEquals(2, count("r", "rejected"));
  }
}
