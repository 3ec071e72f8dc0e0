package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * The default order: Sluice after Spring Security's chain sees the authenticated user, so a rule
 * keyed on {@code user} limits each user on its own, and requests Spring Security refuses are not
 * counted.
 */
@SpringBootTest(
    classes = SecuredApp.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = "sluice.rules=classpath:sluice-test-rules.yaml")
class SluiceAfterSpringSecurityTest {

  @LocalServerPort int port;

  @Test
  void eachUserHasItsOwnCounterBehindOneAddress() throws Exception {
    SecuredClient c = new SecuredClient(port);
    for (int i = 0; i < 3; i++) {
      assertThat(c.status("alice", "a-secret")).isEqualTo(200);
    }
    assertThat(c.status("alice", "a-secret")).isEqualTo(429);
    assertThat(c.status("bob", "b-secret")).isEqualTo(200);
  }

  @Test
  void requestsSpringSecurityRefusesAreNotCounted() throws Exception {
    SecuredClient c = new SecuredClient(port);
    for (int i = 0; i < 5; i++) {
      assertThat(c.status("carol", "wrong")).isEqualTo(401);
    }
    for (int i = 0; i < 3; i++) {
      assertThat(c.status("carol", "c-secret")).isEqualTo(200);
    }
    assertThat(c.status("carol", "c-secret")).isEqualTo(429);
  }
}
