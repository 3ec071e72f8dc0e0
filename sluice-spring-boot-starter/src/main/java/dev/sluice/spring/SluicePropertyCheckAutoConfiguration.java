package dev.sluice.spring;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.config.BeanFactoryPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.Environment;

/**
 * Warns at start, once per name, about a {@code sluice.*} property the starter does not know
 * ({@code sluice.rule=…}), with the nearest known name when one is close, and when {@code sluice.*}
 * properties are set without {@code sluice.rules}. It runs in every application that has the
 * starter, web or not, whether or not {@link SluiceAutoConfiguration} applies, and before any bean
 * is made, so the warning precedes a failure the same typo causes. It warns and never stops the
 * start. Its logger is {@code dev.sluice.spring.SluiceProperties}.
 */
@AutoConfiguration(before = SluiceAutoConfiguration.class)
public class SluicePropertyCheckAutoConfiguration {

  private static final Logger LOG = LoggerFactory.getLogger(SluiceProperties.class);

  @Bean
  static BeanFactoryPostProcessor sluicePropertyCheck(Environment environment) {
    return beanFactory -> {
      if (environment instanceof ConfigurableEnvironment env) {
        UnknownProperties.warnings(env).forEach(LOG::warn);
      }
    };
  }
}
