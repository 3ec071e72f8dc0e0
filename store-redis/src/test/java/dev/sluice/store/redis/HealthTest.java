package dev.sluice.store.redis;

import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.failsafe.CircuitBreaker;
import dev.sluice.Background;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class HealthTest {

  /**
   * A decision on two nodes that takes the permit of one's half-open breaker and is refused by the
   * other's hands the permit back: the first node lets the next call through, it is not left
   * half-open with no permit for ever.
   */
  @Test
  void aHalfOpenPermitTakenForARefusedCallIsHandedBack() {
    Health health =
        new Health(1, Duration.ofHours(1), node -> new CompletableFuture<>(), Background.shared());
    CircuitBreaker<Object> a = health.breaker("a");
    CircuitBreaker<Object> b = health.breaker("b");
    health.failed(a);
    health.failed(b);
    a.halfOpen();
    assertThrows(
        StoreUnavailableException.class, () -> health.acquire(List.of(a, b), List.of("a", "b")));
    health.acquire(List.of(a), List.of("a")); // throws if the permit was kept
  }
}
