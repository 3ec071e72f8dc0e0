package dev.sluice.spring;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * A small WebFlux API as a user writes it: two routes, the starter on the class path (see {@link
 * TestApp}).
 */
@SpringBootConfiguration
@EnableAutoConfiguration(
    excludeName = {
      "org.springframework.boot.autoconfigure.security.reactive.ReactiveSecurityAutoConfiguration",
      "org.springframework.boot.autoconfigure.security.reactive.ReactiveUserDetailsServiceAutoConfiguration",
      "org.springframework.boot.actuate.autoconfigure.security.reactive.ReactiveManagementWebSecurityAutoConfiguration",
      "org.springframework.boot.security.autoconfigure.SecurityAutoConfiguration",
      "org.springframework.boot.security.autoconfigure.web.reactive.ReactiveWebSecurityAutoConfiguration",
      "org.springframework.boot.security.autoconfigure.ReactiveUserDetailsServiceAutoConfiguration",
      "org.springframework.boot.security.autoconfigure.actuate.web.reactive.ReactiveManagementWebSecurityAutoConfiguration"
    })
class ReactiveTestApp {

  @Bean
  RouterFunction<ServerResponse> hello() {
    return RouterFunctions.route()
        .GET("/api/hello", r -> ServerResponse.ok().bodyValue("hello"))
        .GET("/hello", r -> ServerResponse.ok().bodyValue("hello")) // no rule matches it
        .build();
  }
}
