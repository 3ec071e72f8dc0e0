package dev.sluice.servlet;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The path below a context path, however the client spelled the context. */
class ContextPathTest {

  @ParameterizedTest(name = "{0} under {1}")
  @CsvSource({
    // The spellings that reached a servlet under /app while the rules saw the whole URI.
    "//app/api/v1/lead/x, /app, /api/v1/lead/x",
    "/%61pp/api/v1/lead/x, /app, /api/v1/lead/x",
    "/a%70p/api/v1/lead/x, /app, /api/v1/lead/x",
    "/./app/api/v1/lead/x, /app, /api/v1/lead/x",
    "/x/../app/api/v1/lead/x, /app, /api/v1/lead/x",
    "/%2e/app/api/v1/lead/x, /app, /api/v1/lead/x",
    "/app;x=1/api/v1/lead/x, /app, /api/v1/lead/x",
    "///app//api/v1/lead/x, //app, //api/v1/lead/x",
    // As spelled: the rest is kept raw, for the rules to read both ways.
    "/app/api/v1/lead/x, /app, /api/v1/lead/x",
    "/app, /app, ''",
    "/app/./api/v1/lead/%2e%2e, /app, /./api/v1/lead/%2e%2e",
    // A rest that resolves back into the context is below it only from where it leaves it again.
    "/app/x/../../app/api/v1, /app, /api/v1",
    "/app/../app/api/v1, /app, /api/v1",
    "/app/api/../../app/api/v1, /app, /api/v1",
    // A context path answered as the client spelled it (Tomcat does).
    "/%2e/app/api/v1/lead/.;jsessionid=AB12, /%2e/app, /api/v1/lead/.;jsessionid=AB12",
    "/x/../app/api/v1, /x/../app, /api/v1",
    "//app;x=1/api/v1, //app;x=1, /api/v1",
    // Deeper contexts and the root.
    "/a/%62/api, /a/b, /api",
    "/a/x/../b/api, /a/b, /api",
    "/api/v1, '', /api/v1",
    "//api/v1, '', //api/v1",
  })
  void theRulesSeeThePathBelowTheContextTheContainerMatched(
      String uri, String context, String expected) {
    assertEquals(expected, ContextPath.below(uri, context, "/unused", null));
  }

  @ParameterizedTest(name = "{0} under {1}")
  @CsvSource({
    // A container with rules of its own (here, a context the URI does not reach as read): the
    // container's routed path, encoded so that the rules decode it to what the servlet received.
    "/elsewhere/api, /app, /api, /v1/a%b;c, /api/v1/a%25b%3Bc",
    "/elsewhere/api, /app, /api, , /api",
  })
  void aUriThatDoesNotReachTheContextIsReadAsTheContainerRoutedIt(
      String uri, String context, String servletPath, String pathInfo, String expected) {
    assertEquals(expected, ContextPath.below(uri, context, servletPath, pathInfo));
  }

  @ParameterizedTest
  @CsvSource({"%41%42, AB", "%e2%82%ac, €", "a%, a%", "a%4, a%4", "%zz%41, %zzA", "é%41, éA"})
  void decodesPercentEscapesAsUtf8AndKeepsWhatIsNotOne(String raw, String expected) {
    assertEquals(expected, ContextPath.decode(raw, 0, raw.length()));
  }
}
