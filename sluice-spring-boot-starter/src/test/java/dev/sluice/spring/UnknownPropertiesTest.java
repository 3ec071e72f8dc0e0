package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.MutablePropertySources;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/** Which {@code sluice.*} names are warned about, in each form Spring Boot binds. */
class UnknownPropertiesTest {

  private final StandardEnvironment env = new StandardEnvironment();

  UnknownPropertiesTest() {
    // The test's own JVM and environment are not the application's.
    MutablePropertySources sources = env.getPropertySources();
    sources.remove(StandardEnvironment.SYSTEM_PROPERTIES_PROPERTY_SOURCE_NAME);
    sources.remove(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME);
  }

  private void properties(String... nameValue) {
    env.getPropertySources()
        .addLast(new MapPropertySource("application.properties", map(nameValue)));
  }

  private void environment(String... nameValue) {
    env.getPropertySources()
        .addLast(
            new SystemEnvironmentPropertySource(
                StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, map(nameValue)));
  }

  private static Map<String, Object> map(String... nameValue) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i < nameValue.length; i += 2) {
      m.put(nameValue[i], nameValue[i + 1]);
    }
    return m;
  }

  private List<String> warnings() {
    return UnknownProperties.warnings(env);
  }

  @Test
  void aTypoIsNamedWithItsSourceAndTheNameMeant() {
    properties("sluice.rule", "classpath:rules.yaml");
    assertThat(warnings())
        .containsExactly(
            "sluice.rule (in application.properties) is not a Sluice property and is ignored;"
                + " did you mean sluice.rules?",
            "sluice.* properties are set but sluice.rules is not: the Sluice starter configures"
                + " no limiter and limits nothing");
  }

  @Test
  void everyKnownNameInEveryRelaxedFormPasses() {
    properties(
        "sluice.rules", "classpath:rules.yaml",
        "sluice.rulesCheckInterval", "2s",
        "sluice.rules_check_interval", "2s",
        "sluice.store", "memcached",
        "sluice.memcached.servers", "localhost:11211",
        "sluice.memcached.operation-timeout", "50ms",
        "sluice.memcached.connectTimeout", "1s",
        "sluice.memcached.prefix", "api",
        "sluice.in-memory.maximum-counters", "10",
        "sluice.inMemory.maximumCounters", "10",
        "sluice.knobs", "1s",
        "sluice.filter.order", "1",
        "sluice.filter.url-patterns[0]", "/api/*",
        "sluice.filter.url-patterns[1]", "/v2/*",
        "sluice.filter.url-patterns", "/api/*,/v2/*");
    environment(
        "SLUICE_RULES", "classpath:rules.yaml",
        "SLUICE_RULESCHECKINTERVAL", "2s",
        "SLUICE_RULES_CHECK_INTERVAL", "2s",
        "SLUICE_INMEMORY_MAXIMUMCOUNTERS", "10",
        "SLUICE_MEMCACHED_OPERATION_TIMEOUT", "50ms",
        "SLUICE_FILTER_URLPATTERNS_0", "/api/*");
    assertThat(warnings()).isEmpty();
  }

  @Test
  void anEnvironmentVariableTypoIsNamedInItsOwnForm() {
    properties("sluice.rules", "classpath:rules.yaml");
    environment("SLUICE_MEMCACHED_SERVER", "localhost:11211", "PATH", "/usr/bin");
    assertThat(warnings())
        .containsExactly(
            "SLUICE_MEMCACHED_SERVER (in systemEnvironment) is not a Sluice property and is"
                + " ignored; did you mean SLUICE_MEMCACHED_SERVERS (sluice.memcached.servers)?");
  }

  @Test
  void aNameCloseToNoneIsNamedAloneAndANameBelowAValueIsUnknown() {
    properties(
        "sluice.rules", "classpath:rules.yaml",
        "sluice.colour", "blue",
        "sluice.rules.path", "x",
        "sluice.memcached", "localhost:11211");
    assertThat(warnings())
        .containsExactly(
            "sluice.colour (in application.properties) is not a Sluice property and is ignored",
            "sluice.rules.path (in application.properties) is not a Sluice property and is"
                + " ignored",
            "sluice.memcached (in application.properties) is not a Sluice property and is"
                + " ignored");
  }

  @Test
  void aNameSetTwiceIsWarnedAboutOnce() {
    properties("sluice.rules", "classpath:rules.yaml", "sluice.stroe", "memcached");
    env.getPropertySources()
        .addFirst(new MapPropertySource("test", map("sluice.stroe", "in-memory")));
    assertThat(warnings())
        .containsExactly(
            "sluice.stroe (in test) is not a Sluice property and is ignored; did you mean"
                + " sluice.store?");
  }

  @Test
  void withoutSluicePropertiesNothingIsSaid() {
    properties("server.port", "8080", "sluicer.x", "1");
    assertThat(warnings()).isEmpty();
  }

  @Test
  void theKnownNamesAreWhatSluicePropertiesBinds() {
    assertThat(UnknownProperties.KNOWN)
        .extracting(UnknownProperties.Known::name)
        .containsExactlyInAnyOrder(
            "sluice.rules",
            "sluice.rules-check-interval",
            "sluice.store",
            "sluice.knobs",
            "sluice.memcached.servers",
            "sluice.memcached.prefix",
            "sluice.memcached.operation-timeout",
            "sluice.memcached.connect-timeout",
            "sluice.in-memory.maximum-counters",
            "sluice.redis.uri",
            "sluice.redis.cluster",
            "sluice.redis.prefix",
            "sluice.redis.username",
            "sluice.redis.password",
            "sluice.redis.tls",
            "sluice.redis.operation-timeout",
            "sluice.redis.connect-timeout",
            "sluice.filter.order",
            "sluice.filter.url-patterns");
  }
}
