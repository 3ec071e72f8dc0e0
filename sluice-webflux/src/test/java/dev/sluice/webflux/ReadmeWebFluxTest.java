package dev.sluice.webflux;

import dev.sluice.ReadmeSnippets;
import org.junit.jupiter.api.Test;

/** The README's WebFlux snippet compiles as given. */
class ReadmeWebFluxTest {

  @Test
  void webFlux() throws Exception {
    ReadmeSnippets.compile(ReadmeSnippets.javaUnder("WebFlux"));
  }
}
