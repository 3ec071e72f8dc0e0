package dev.sluice.spring;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;

/**
 * The {@code sluice} component of {@code /actuator/health} on Spring Boot 4: {@link StoreHealth}.
 */
final class SluiceBoot4HealthIndicator implements HealthIndicator {

  /** {@link StoreHealth#LOCAL}. */
  static final Status LOCAL = new Status(StoreHealth.LOCAL, StoreHealth.LOCAL_DESCRIPTION);

  private final StoreHealth health;

  SluiceBoot4HealthIndicator(StoreHealth health) {
    this.health = health;
  }

  @Override
  public Health health() {
    StoreHealth.Check c = health.check();
    Health.Builder h = Health.unknown().withDetail("store", c.store());
    if (c.failure() == null) {
      return h.up().build();
    }
    return h.status(c.status().equals(StoreHealth.LOCAL) ? LOCAL : Status.DOWN)
        .withException(c.failure())
        .withDetail("onStoreFailure", c.onStoreFailure())
        .build();
  }
}
