package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.InputStream;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The configuration metadata the jar ships ({@code META-INF/spring-configuration-metadata.json},
 * written by Spring Boot's configuration processor), which IDEs complete {@code sluice.*} from.
 */
class ConfigurationMetadataTest {

  static JsonNode metadata() throws Exception {
    try (InputStream in =
        ConfigurationMetadataTest.class
            .getClassLoader()
            .getResourceAsStream("META-INF/spring-configuration-metadata.json")) {
      assertThat(in).as("spring-configuration-metadata.json").isNotNull();
      return new ObjectMapper().readTree(in);
    }
  }

  static Map<String, JsonNode> properties(JsonNode metadata) {
    Map<String, JsonNode> out = new HashMap<>();
    metadata.get("properties").forEach(p -> out.put(p.get("name").asText(), p));
    return out;
  }

  @Test
  void everyPropertyTheStarterBindsIsListedWithADescription() throws Exception {
    Map<String, JsonNode> properties = properties(metadata());
    assertThat(properties).containsKeys("sluice.rules", "sluice.store", "sluice.memcached.servers");
    for (UnknownProperties.Known k : UnknownProperties.KNOWN) {
      assertThat(properties).containsKey(k.name());
      assertThat(properties.get(k.name()).path("description").asText())
          .as(k.name())
          .isNotBlank()
          .doesNotContain("{@");
    }
  }

  @Test
  void defaultsAndTheStoresAreListed() throws Exception {
    JsonNode metadata = metadata();
    Map<String, JsonNode> properties = properties(metadata);
    assertThat(properties.get("sluice.store").get("defaultValue").asText()).isEqualTo("in-memory");
    assertThat(properties.get("sluice.memcached.operation-timeout").get("defaultValue").asText())
        .isEqualTo("50ms");
    assertThat(properties).containsKey("management.health.sluice.enabled");
    JsonNode store = null;
    for (JsonNode hint : metadata.get("hints")) {
      if (hint.get("name").asText().equals("sluice.store")) {
        store = hint;
      }
    }
    assertThat(store).isNotNull();
    assertThat(store.get("values").findValuesAsText("value"))
        .containsExactly("in-memory", "memcached");
  }
}
