package dev.sluice.shedding.adaptive;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.netflix.concurrency.limits.limit.FixedLimit;
import dev.sluice.Outcome;
import dev.sluice.Slots;
import dev.sluice.http.PriorityClass;
import dev.sluice.http.RequestLimiter;
import dev.sluice.http.Rule;
import dev.sluice.http.RuleSet;
import dev.sluice.http.Shedding;
import dev.sluice.http.TestRequest;
import dev.sluice.shedding.LoadShedder;
import dev.sluice.spi.FakeClock;
import dev.sluice.spi.ReferenceCounterStore;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The rules' {@code workers: { adaptive: NAME }} with this module on the class path. */
class AdaptiveSheddingTest {

  private static final List<PriorityClass> CLASSES =
      List.of(
          PriorityClass.of("critical", 0).withMethods("POST").withPath("/api/v1/lead/{id}"),
          PriorityClass.of("test", 3).withHeader("X-Test-Mode", "true"),
          PriorityClass.of("writes", 1).withMethods("POST", "PUT", "PATCH", "DELETE"),
          PriorityClass.of("reads", 2));

  private static RequestLimiter limiter(Shedding shedding) {
    return RequestLimiter.builder(new ReferenceCounterStore())
        .clock(new FakeClock())
        .rules(
            RuleSet.builder()
                .rule(Rule.builder("per-ip").key("ip").tier(1_000, Duration.ofMinutes(1)).build())
                .shedding(shedding)
                .build())
        .build();
  }

  @Test
  void netflixsAdaptiveLimitCanBeTheCapacity() {
    RequestLimiter l = limiter(Shedding.builder().classes(CLASSES).adaptive("gradient2").build());
    Outcome out = new Outcome();
    l.decide(TestRequest.get("/api/v1/report").from("192.0.2.1"), out);
    Slots a = l.slots(out);
    assertTrue(out.allowed());
    double u = l.loadShedder().orElseThrow().utilization();
    assertTrue(u > 0 && u < 1, "one request over Gradient2's estimate: " + u);
    a.release();
    assertEquals(0, l.loadShedder().orElseThrow().inFlight());
  }

  @Test
  void vegasIsFoundByNameToo() {
    LoadShedder s = LoadShedder.builder().adaptive("vegas").build();
    Runnable done = s.enter();
    double u = s.utilization();
    assertTrue(u > 0 && u < 1, "one request over Vegas's estimate: " + u);
    done.run();
    assertEquals(0, s.inFlight());
  }

  @Test
  void anyNetflixLimitCanBeGivenInCode() {
    LoadShedder s = LoadShedder.builder().adaptive(NetflixCapacity.of(FixedLimit.of(8))).build();
    Runnable a = s.enter();
    Runnable b = s.enter();
    assertEquals(0.25, s.utilization());
    a.run();
    b.run();
    assertEquals(0, s.inFlight());
  }

  @Test
  void aNameNoProviderKnowsIsRefused() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> LoadShedder.builder().adaptive("aimd"));
    assertTrue(e.getMessage().contains("gradient2, vegas"), e.getMessage());
  }
}
