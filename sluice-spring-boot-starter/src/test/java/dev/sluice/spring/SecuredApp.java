package dev.sluice.spring;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;

/** The same API behind Spring Security's HTTP basic, with two users. */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import(TestApp.Hello.class)
class SecuredApp {

  @Bean
  SecurityFilterChain security(HttpSecurity http) throws Exception {
    return http.authorizeHttpRequests(a -> a.anyRequest().authenticated())
        .httpBasic(Customizer.withDefaults())
        .csrf(c -> c.disable())
        .build();
  }

  @Bean
  InMemoryUserDetailsManager users() {
    return new InMemoryUserDetailsManager(
        User.withUsername("alice").password("{noop}a-secret").roles("USER").build(),
        User.withUsername("bob").password("{noop}b-secret").roles("USER").build(),
        User.withUsername("carol").password("{noop}c-secret").roles("USER").build());
  }
}
