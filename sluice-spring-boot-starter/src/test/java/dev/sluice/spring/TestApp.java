package dev.sluice.spring;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * A small API as a user writes it: one controller, the starter on the class path, no security. The
 * test sources run on Spring Boot 3.5 and 4 (sluice-spring-boot4-it), so they name what moved
 * between the two by both names, and find a server's port in the environment.
 */
@SpringBootConfiguration
@EnableAutoConfiguration(
    excludeName = {
      "org.springframework.boot.autoconfigure.security.servlet.SecurityAutoConfiguration",
      "org.springframework.boot.autoconfigure.security.servlet.UserDetailsServiceAutoConfiguration",
      "org.springframework.boot.actuate.autoconfigure.security.servlet.ManagementWebSecurityAutoConfiguration",
      "org.springframework.boot.security.autoconfigure.SecurityAutoConfiguration",
      "org.springframework.boot.security.autoconfigure.UserDetailsServiceAutoConfiguration",
      "org.springframework.boot.security.autoconfigure.web.servlet.ServletWebSecurityAutoConfiguration",
      "org.springframework.boot.security.autoconfigure.actuate.web.servlet.ManagementWebSecurityAutoConfiguration"
    })
@Import(TestApp.Hello.class)
class TestApp {

  /** The port a started application's server listens on. */
  static int port(ConfigurableApplicationContext app) {
    return app.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
  }

  @RestController
  static class Hello {
    @GetMapping("/api/hello")
    String hello() {
      return "hello";
    }
  }
}
