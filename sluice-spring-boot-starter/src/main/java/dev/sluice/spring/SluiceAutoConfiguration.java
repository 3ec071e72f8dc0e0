package dev.sluice.spring;

import dev.sluice.DecisionListener;
import dev.sluice.http.RequestLimiter;
import dev.sluice.http.RuleSet;
import dev.sluice.micrometer.MicrometerListener;
import dev.sluice.micrometer.StoreMetrics;
import dev.sluice.servlet.SluiceFilter;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterStoreProvider;
import dev.sluice.webflux.SluiceWebFilter;
import dev.sluice.yaml.RulesFile;
import dev.sluice.yaml.YamlRules;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.core.io.Resource;
import org.springframework.core.io.ResourceLoader;

/**
 * Rate limiting for a Spring Boot application from {@code sluice.*} properties: a {@link
 * RequestLimiter} bean over the rules file (watched when it is a file), and in front of the
 * application the {@link SluiceFilter} (servlet) or the {@link SluiceWebFilter} (WebFlux, deciding
 * without blocking the event loop), registered after Spring Security's filter chain; decisions
 * counted in the context's {@link MeterRegistry} and, with Actuator, the {@code sluice} endpoint
 * and the {@code sluice} health component. Define a {@link RequestLimiter} or {@link CounterStore}
 * bean to replace the starter's.
 *
 * <p>One artifact for Spring Boot 3.5 and 4.0: it uses the types both share, and where Boot 4 moved
 * one (health, the metrics registry's configuration) a configuration per version applies by the
 * class names it finds.
 */
@AutoConfiguration(
    afterName = {
      // The context's MeterRegistry: Spring Boot 3's, then 4's name for the same configuration.
      "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration",
      "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration"
    })
@ConditionalOnWebApplication
@ConditionalOnProperty(prefix = "sluice", name = "rules")
@EnableConfigurationProperties(SluiceProperties.class)
public class SluiceAutoConfiguration {

  /**
   * Spring Security's {@code SecurityProperties.DEFAULT_FILTER_ORDER}, without the class; its
   * WebFlux filter chain runs at the same order.
   */
  static final int SECURITY_FILTER_ORDER = -100;

  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  CounterStore sluiceCounterStore(SluiceProperties properties, Environment env) {
    String store = properties.getStore().trim();
    Map<String, String> settings = new HashMap<>();
    if (store.equals("in-memory")) {
      Integer max = properties.getInMemory().getMaximumCounters();
      put(settings, "maximumCounters", max == null ? null : max.toString());
    } else if (store.equals("redis")) {
      settings.putAll(RedisSettings.of(properties.getRedis(), env));
    } else {
      SluiceProperties.Memcached m = properties.getMemcached();
      put(settings, "servers", m.getServers());
      put(settings, "prefix", m.getPrefix());
      put(settings, "operationTimeout", millis(m.getOperationTimeout()));
      put(settings, "connectTimeout", millis(m.getConnectTimeout()));
    }
    try {
      return CounterStoreProvider.create(
          store, settings, Thread.currentThread().getContextClassLoader());
    } catch (IllegalArgumentException e) {
      throw new IllegalStateException("sluice.store=" + store + ": " + e.getMessage(), e);
    }
  }

  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  RequestLimiter sluiceRequestLimiter(
      CounterStore store,
      SluiceProperties properties,
      ResourceLoader resources,
      ObjectProvider<DecisionListener> listener) {
    RequestLimiter.Builder b =
        RequestLimiter.builder(store).rules(load(properties.getRules(), resources));
    listener.ifUnique(b::listener);
    if (properties.getKnobs() != null) {
      b.knobs(properties.getKnobs());
    }
    return b.build();
  }

  /** Watches the rules file for the starter's limiter; nothing to watch for a resource. */
  @Bean(destroyMethod = "close")
  RulesWatch sluiceRulesWatch(RequestLimiter limiter, SluiceProperties properties) {
    Optional<Path> file = file(properties.getRules());
    return new RulesWatch(
        file.map(f -> RulesFile.watch(f, limiter, properties.getRulesCheckInterval())));
  }

  /** The servlet filter, in a servlet application. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
  @ConditionalOnClass(name = {"jakarta.servlet.Filter", "dev.sluice.servlet.SluiceFilter"})
  static class Servlet {
    @Bean
    @ConditionalOnMissingBean(name = "sluiceFilter")
    FilterRegistrationBean<SluiceFilter> sluiceFilter(
        RequestLimiter limiter, SluiceProperties properties, Environment env) {
      FilterRegistrationBean<SluiceFilter> r =
          new FilterRegistrationBean<>(new SluiceFilter(limiter));
      r.setName("sluice");
      r.setUrlPatterns(properties.getFilter().getUrlPatterns());
      Integer order = properties.getFilter().getOrder();
      r.setOrder(
          order != null
              ? order
              : env.getProperty(
                      "spring.security.filter.order", Integer.class, SECURITY_FILTER_ORDER)
                  + 1);
      return r;
    }
  }

  /** The web filter, in a WebFlux application. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
  @ConditionalOnClass(
      name = {"org.springframework.web.server.WebFilter", "dev.sluice.webflux.SluiceWebFilter"})
  static class Reactive {
    @Bean
    @ConditionalOnMissingBean(name = "sluiceWebFilter")
    SluiceWebFilter sluiceWebFilter(RequestLimiter limiter, SluiceProperties properties) {
      Integer order = properties.getFilter().getOrder();
      return new SluiceWebFilter(limiter, order != null ? order : SECURITY_FILTER_ORDER + 1);
    }
  }

  /** Decisions, rejections and store latency in the context's registry. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass({MeterRegistry.class, MicrometerListener.class})
  static class Metrics {
    @Bean
    @ConditionalOnBean(MeterRegistry.class)
    @ConditionalOnMissingBean(DecisionListener.class)
    MicrometerListener sluiceMetrics(MeterRegistry registry) {
      return new MicrometerListener(registry);
    }

    /** The store's evictions per node ({@code sluice.store.evictions}). */
    @Bean
    @ConditionalOnBean(MeterRegistry.class)
    @ConditionalOnMissingBean(StoreMetrics.class)
    StoreMetrics sluiceStoreMetrics(CounterStore store) {
      return new StoreMetrics(store);
    }
  }

  /** {@code /actuator/sluice}: the rules and knobs in force. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.springframework.boot.actuate.endpoint.annotation.Endpoint")
  static class Actuator {
    @Bean
    @ConditionalOnAvailableEndpoint
    SluiceEndpoint sluiceEndpoint(RequestLimiter limiter) {
      return new SluiceEndpoint(limiter);
    }
  }

  /**
   * {@code /actuator/health}'s {@code sluice} component on Spring Boot 3: whether the counter store
   * answers ({@link StoreHealth}). Off with {@code management.health.sluice.enabled=false}.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(
      name = {
        "org.springframework.boot.actuate.health.HealthIndicator",
        "org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator"
      })
  static class StoreHealthBoot3 {
    @Bean
    @org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator(
        "sluice")
    @ConditionalOnMissingBean(name = "sluiceHealthIndicator")
    SluiceHealthIndicator sluiceHealthIndicator(CounterStore store, RequestLimiter limiter) {
      return new SluiceHealthIndicator(new StoreHealth(store, limiter));
    }
  }

  /** The same component on Spring Boot 4, whose health types are in their own module. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(
      name = {
        "org.springframework.boot.health.contributor.HealthIndicator",
        "org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator"
      })
  static class StoreHealthBoot4 {
    @Bean
    @org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator(
        "sluice")
    @ConditionalOnMissingBean(name = "sluiceHealthIndicator")
    SluiceBoot4HealthIndicator sluiceHealthIndicator(CounterStore store, RequestLimiter limiter) {
      return new SluiceBoot4HealthIndicator(new StoreHealth(store, limiter));
    }
  }

  /** A rules file to watch: a location that is not {@code classpath:} nor another URL. */
  static Optional<Path> file(String location) {
    if (location.startsWith("file:")) {
      return Optional.of(Path.of(java.net.URI.create(location)));
    }
    // A URL scheme has two letters or more, so a path after a Windows drive letter reads as a file.
    return location.matches("^[a-zA-Z][a-zA-Z0-9+.-]+:.*")
        ? Optional.empty()
        : Optional.of(Path.of(location));
  }

  static RuleSet load(String location, ResourceLoader resources) {
    Optional<Path> file = file(location);
    if (file.isPresent()) {
      return YamlRules.load(file.get());
    }
    Resource r = resources.getResource(location);
    try (InputStream in = r.getInputStream()) {
      return YamlRules.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8), location);
    } catch (IOException e) {
      throw new UncheckedIOException("sluice.rules=" + location + ": " + e.getMessage(), e);
    }
  }

  private static void put(Map<String, String> settings, String name, String value) {
    if (value != null) {
      settings.put(name, value);
    }
  }

  private static String millis(Duration d) {
    return d == null ? null : d.toMillis() + "ms";
  }

  /** The rules file's watcher, if the rules are a file. */
  static final class RulesWatch implements AutoCloseable {
    private final Optional<RulesFile> watcher;

    RulesWatch(Optional<RulesFile> watcher) {
      this.watcher = watcher;
    }

    @Override
    public void close() {
      watcher.ifPresent(RulesFile::close);
    }
  }
}
