package dev.sluice.spring;

import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.actuate.health.Status;

/**
 * The {@code sluice} component of {@code /actuator/health} on Spring Boot 3: {@link StoreHealth}.
 */
final class SluiceHealthIndicator implements HealthIndicator {

  /** {@link StoreHealth#LOCAL}. */
  static final Status LOCAL = new Status(StoreHealth.LOCAL, StoreHealth.LOCAL_DESCRIPTION);

  private final StoreHealth health;

  SluiceHealthIndicator(StoreHealth health) {
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
