package dev.sluice.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PathPatternTest {

  private static Map<String, String> match(String pattern, String path) {
    return PathPattern.pattern(pattern).match(PathPattern.normalize(path));
  }

  @Test
  void segmentsReadAsTheNormalizedPathIsSplit() {
    PathPattern.Segments s = new PathPattern.Segments();
    for (String raw :
        new String[] {
          "/",
          "",
          "/api/v1/report",
          "/api/v1/report/",
          "//api//v1//",
          "/api/./v1/../v2",
          "/api/%2e%2e/x",
          "/a;b=c/d",
          "/a/%25/b",
          "/a/%2Fb",
          "/.hidden/..dots/x..",
          "/../../etc",
          "/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t"
        }) {
      s.of(raw);
      String[] expected = PathPattern.split(PathPattern.normalize(raw));
      String[] actual = new String[s.size()];
      for (int i = 0; i < actual.length; i++) {
        actual[i] = s.get(i);
      }
      org.junit.jupiter.api.Assertions.assertArrayEquals(expected, actual, raw);
    }
  }

  @Test
  void wildcardsAndCaptures() {
    assertEquals(
        Map.of("orgId", "42"),
        match("/v1/organizations/{orgId}/product/*", "/v1/organizations/42/product/7"));
    assertNull(match("/v1/organizations/{orgId}/product/*", "/v1/organizations/42/product/7/x"));
    assertEquals(Map.of(), match("/api/**", "/api"));
    assertEquals(Map.of(), match("/api/**", "/api/v1/report"));
    assertNull(match("/api/**", "/apix/v1"));
    assertEquals(Map.of("id", "9"), match("/**/lead/{id}", "/api/v1/lead/9"));
    assertNull(match("/v1/*", "/v1"));
  }

  @Test
  void spellingsOfAPathCannotDodgeARule() {
    for (String spelling :
        new String[] {
          "/api/v1/report",
          "/api/v1/report/",
          "/api//v1/report",
          "//api/v1//report//",
          "/api/./v1/report",
          "/api/x/../v1/report",
          "/api%2Fv1%2Freport",
          "/%61pi/v1/report"
        }) {
      assertEquals(Map.of(), match("/api/v1/report", spelling), spelling);
    }
    assertEquals("/etc", PathPattern.normalize("/../../etc"), "never above the root");
  }

  @Test
  void pathParametersAreCutFromEverySegment() {
    for (String spelling :
        new String[] {
          "/api/v1/report;x=1",
          "/api/v1/report;x=2",
          "/api;a=b/v1;c/report",
          "/api/v1/report;",
          "/api/v1/report;jsessionid=ABC/",
          "/api/v1/report%3Bx=1",
          "/api/v1;/report"
        }) {
      assertEquals(Map.of(), match("/api/v1/report", spelling), spelling);
    }
    assertEquals(
        Map.of("orgId", "42"),
        match("/v1/organizations/{orgId}/product/*", "/v1/organizations/42;v=1/product/7;x"));
  }

  @Test
  void manyDoubleStarsMatchInLinearTime() {
    // Backtracking into every '**' would try C(2000, 12) splits of this path; the matcher tries at
    // most one restart per segment per '**'. The timeout only catches a hang, it measures nothing.
    String pattern = "/**/a".repeat(12) + "/b";
    String path = "/a".repeat(2_000);
    assertTimeoutPreemptively(
        Duration.ofSeconds(30),
        () -> {
          assertNull(match(pattern, path));
          assertEquals(Map.of(), match(pattern, path + "/b"));
        });
    assertEquals(
        Map.of("x", "a"), match("/**/{x}/**/d", "/a/b/c/d"), "each ** takes as little as it can");
    assertNull(match("/**/a/**/b", "/b/a"));
    assertEquals(Map.of(), match("/**/a/**/b", "/a/b"));
  }

  @Test
  void prefixesMatchWholeSegments() {
    PathPattern p = PathPattern.prefix("/api/");
    assertEquals(Map.of(), p.match(PathPattern.normalize("/api")));
    assertEquals(Map.of(), p.match(PathPattern.normalize("/api/v1")));
    assertNull(p.match(PathPattern.normalize("/apiary")));
  }

  @Test
  void badPatternsAreRefused() {
    assertThrows(IllegalArgumentException.class, () -> PathPattern.pattern("api"));
    assertThrows(IllegalArgumentException.class, () -> PathPattern.pattern("/a*b"));
    assertThrows(IllegalArgumentException.class, () -> PathPattern.pattern("/{id"));
    assertThrows(IllegalArgumentException.class, () -> PathPattern.pattern("/{}"));
  }
}
