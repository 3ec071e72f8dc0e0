package dev.sluice.spring;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.actuate.autoconfigure.security.reactive.ReactiveManagementWebSecurityAutoConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.security.reactive.ReactiveSecurityAutoConfiguration;
import org.springframework.boot.autoconfigure.security.reactive.ReactiveUserDetailsServiceAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;

/** A small WebFlux API as a user writes it: one route, the starter on the class path. */
@SpringBootConfiguration
@EnableAutoConfiguration(
    exclude = {
      ReactiveSecurityAutoConfiguration.class,
      ReactiveUserDetailsServiceAutoConfiguration.class,
      ReactiveManagementWebSecurityAutoConfiguration.class
    })
class ReactiveTestApp {

  @Bean
  RouterFunction<ServerResponse> hello() {
    return RouterFunctions.route()
        .GET("/api/hello", r -> ServerResponse.ok().bodyValue("hello"))
        .build();
  }
}
