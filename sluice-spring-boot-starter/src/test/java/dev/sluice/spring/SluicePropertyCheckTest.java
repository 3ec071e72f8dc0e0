package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.http.RequestLimiter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

/** A start with a mistyped {@code sluice.*} property says so in the log. */
@ExtendWith(OutputCaptureExtension.class)
class SluicePropertyCheckTest {

  @Test
  void aMistypedRulesPropertyIsWarnedAboutWithTheNameMeant(CapturedOutput output) {
    try (ConfigurableApplicationContext app =
        new SpringApplicationBuilder(TestApp.class)
            .web(WebApplicationType.NONE)
            .properties("sluice.rule=classpath:sluice-test-rules.yaml")
            .run()) {
      assertThat(app.getBeanProvider(RequestLimiter.class).getIfAvailable()).isNull();
    }
    assertThat(output.getOut().lines().filter(l -> l.contains("WARN")))
        .anySatisfy(
            l ->
                assertThat(l)
                    .contains("sluice.rule (in ")
                    .contains("is not a Sluice property and is ignored")
                    .contains("did you mean sluice.rules?"))
        .anySatisfy(l -> assertThat(l).contains("sluice.rules is not"));
  }

  @Test
  void aCorrectConfigurationStartsWithoutAWarning(CapturedOutput output) {
    try (ConfigurableApplicationContext app =
        new SpringApplicationBuilder(TestApp.class)
            .properties(
                "server.port=0",
                "sluice.rules=classpath:sluice-test-rules.yaml",
                "sluice.filter.url-patterns[0]=/api/*")
            .run()) {
      assertThat(app.getBean(RequestLimiter.class)).isNotNull();
    }
    assertThat(output.getOut())
        .doesNotContain("not a Sluice property")
        .doesNotContain("sluice.rules is not");
  }
}
