package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * {@code sluice.filter.order} before Spring Security's chain: no user is known yet, so a rule keyed
 * on {@code [user, …, ip]} counts everyone behind one address together, and refused requests count
 * too (a flood of bad passwords is limited before it costs a password check).
 */
@SpringBootTest(
    classes = SecuredApp.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {"sluice.rules=classpath:sluice-test-rules.yaml", "sluice.filter.order=-101"})
class SluiceBeforeSpringSecurityTest {

  @LocalServerPort int port;

  @Test
  void usersBehindOneAddressShareItsCounterAndRefusalsCount() throws Exception {
    SecuredClient c = new SecuredClient(port);
    assertThat(c.status("alice", "wrong")).isEqualTo(401);
    assertThat(c.status("alice", "a-secret")).isEqualTo(200);
    assertThat(c.status("bob", "b-secret")).isEqualTo(200);
    assertThat(c.status("bob", "b-secret")).isEqualTo(429);
    assertThat(c.status("carol", "wrong")).isEqualTo(429);
  }
}
