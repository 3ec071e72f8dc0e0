package dev.sluice.spring;

import dev.sluice.ReadmeSnippets;
import org.junit.jupiter.api.Test;

/** The README's Spring Boot snippet compiles as given. */
class ReadmeSpringBootTest {

  @Test
  void springBoot() throws Exception {
    ReadmeSnippets.compile(ReadmeSnippets.javaUnder("Spring Boot"));
  }
}
