package dev.sluice.spring;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.actuate.autoconfigure.security.servlet.ManagementWebSecurityAutoConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.security.servlet.SecurityAutoConfiguration;
import org.springframework.boot.autoconfigure.security.servlet.UserDetailsServiceAutoConfiguration;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/** A small API as a user writes it: one controller, the starter on the class path, no security. */
@SpringBootConfiguration
@EnableAutoConfiguration(
    exclude = {
      SecurityAutoConfiguration.class,
      UserDetailsServiceAutoConfiguration.class,
      ManagementWebSecurityAutoConfiguration.class
    })
@Import(TestApp.Hello.class)
class TestApp {

  @RestController
  static class Hello {
    @GetMapping("/api/hello")
    String hello() {
      return "hello";
    }
  }
}
