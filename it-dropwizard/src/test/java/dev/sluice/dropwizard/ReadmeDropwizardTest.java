package dev.sluice.dropwizard;

import dev.sluice.ReadmeSnippets;
import org.junit.jupiter.api.Test;

/** The README's Dropwizard snippet compiles as given. */
class ReadmeDropwizardTest {

  @Test
  void dropwizard() throws Exception {
    ReadmeSnippets.compile(ReadmeSnippets.javaUnder("Dropwizard"));
  }
}
