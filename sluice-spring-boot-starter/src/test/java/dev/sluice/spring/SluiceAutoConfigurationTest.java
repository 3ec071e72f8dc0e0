package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.http.RequestLimiter;
import dev.sluice.http.RuleSet;
import dev.sluice.servlet.SluiceFilter;
import dev.sluice.store.inmemory.InMemoryCounterStore;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;

/** What the auto-configuration makes of the properties, without a server. */
class SluiceAutoConfigurationTest {

  private final WebApplicationContextRunner runner =
      new WebApplicationContextRunner()
          .withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class));

  @Test
  void withoutRulesNothingIsConfigured() {
    runner.run(c -> assertThat(c).doesNotHaveBean(RequestLimiter.class).hasNotFailed());
  }

  @Test
  void aBadRulesFileStopsTheStartNamingItsLineAndField(@TempDir Path dir) throws Exception {
    Path rules = dir.resolve("rules.yaml");
    Files.writeString(
        rules,
        "rules:\n  - id: a\n    match: { prefix: /api }\n    tiers: [ { limit: -1, period: 1m } ]\n");
    runner
        .withPropertyValues("sluice.rules=" + rules)
        .run(
            c ->
                assertThat(c)
                    .getFailure()
                    .rootCause()
                    .hasMessageContaining("rules.yaml:4:")
                    .hasMessageContaining("rules[0].tiers[0].limit"));
  }

  @Test
  void anUnknownStoreOrAMissingSettingStopsTheStartNamingIt() {
    runner
        .withPropertyValues(
            "sluice.rules=classpath:sluice-test-rules.yaml", "sluice.store=cassandra")
        .run(c -> assertThat(c).getFailure().hasMessageContaining("sluice.store=cassandra"));
    runner
        .withPropertyValues(
            "sluice.rules=classpath:sluice-test-rules.yaml", "sluice.store=memcached")
        .run(
            c ->
                assertThat(c)
                    .getFailure()
                    .hasMessageContaining("sluice.store=memcached")
                    .hasMessageContaining("servers"));
  }

  @Test
  void theFilterFollowsSpringSecuritysOrderUnlessGivenOne() {
    runner
        .withPropertyValues(
            "sluice.rules=classpath:sluice-test-rules.yaml", "spring.security.filter.order=10")
        .run(c -> assertThat(filter(c).getOrder()).isEqualTo(11));
    runner
        .withPropertyValues(
            "sluice.rules=classpath:sluice-test-rules.yaml", "sluice.filter.order=-500")
        .run(c -> assertThat(filter(c).getOrder()).isEqualTo(-500));
  }

  @Test
  void aLimiterBeanOfTheApplicationsOwnIsTheOneFiltered() {
    RequestLimiter own =
        RequestLimiter.builder(InMemoryCounterStore.create())
            .rules(RuleSet.builder().build())
            .build();
    runner
        .withPropertyValues("sluice.rules=classpath:sluice-test-rules.yaml")
        .withBean(RequestLimiter.class, () -> own)
        .run(
            c -> {
              assertThat(c).getBean(RequestLimiter.class).isSameAs(own);
              assertThat(filter(c).getFilter().limiter()).isSameAs(own);
            });
  }

  @SuppressWarnings("unchecked")
  private static FilterRegistrationBean<SluiceFilter> filter(
      org.springframework.boot.test.context.assertj.AssertableWebApplicationContext c) {
    return c.getBean("sluiceFilter", FilterRegistrationBean.class);
  }
}
