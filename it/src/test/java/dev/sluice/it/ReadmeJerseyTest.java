package dev.sluice.it;

import dev.sluice.ReadmeSnippets;
import org.junit.jupiter.api.Test;

/** The README's Jersey snippets compile as given. */
class ReadmeJerseyTest {

  @Test
  void jerseyOnItsOwnServer() throws Exception {
    ReadmeSnippets.compile(ReadmeSnippets.javaUnder("Jersey on its own server (Grizzly, Jetty)"));
  }

  @Test
  void jerseyInAServletContainer() throws Exception {
    ReadmeSnippets.compile(
        ReadmeSnippets.javaUnder("Jersey in a servlet container (Tomcat, Jetty)"));
  }
}
