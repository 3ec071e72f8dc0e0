package dev.sluice.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PathPatternTest {

  /** The captures of the first reading that matches: as routed, else as a servlet resolves it. */
  private static Map<String, String> match(String pattern, String path) {
    PathPattern p = PathPattern.pattern(pattern);
    PathPattern.Segments s = new PathPattern.Segments();
    s.of(path);
    Map<String, String> m = p.match(s);
    return m != null || s.resolved() == null ? m : p.match(s.resolved());
  }

  private static List<String> segments(PathPattern.Segments s) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < s.size(); i++) {
      out.add(s.get(i));
    }
    return out;
  }

  @Test
  void aPathIsSplitOnSlashesBeforeEachSegmentIsDecoded() {
    // raw path -> segments as routed | segments as a servlet container resolves them (or "-")
    String[][] cases = {
      {"/", "", "-"},
      {"", "", "-"},
      {"/api/v1/report", "api v1 report", "-"},
      {"/api/v1/report/", "api v1 report", "-"},
      {"//api//v1//", "api v1", "-"},
      {"/api/./v1/../v2", "api . v1 .. v2", "api v2"},
      {"/api/%2e%2e/x", "api .. x", "x"},
      {"/a;b=c/d", "a d", "-"},
      {"/a/%25/b", "a % b", "-"},
      {"/a/%2Fb", "a /b", "-"},
      {"/a/x%2F..%2Fy", "a x/../y", "-"},
      {"/a/%3Bx/b;c", "a ;x b", "-"},
      {"/a/;x=1/b", "a b", "-"},
      {"/.hidden/..dots/x..", ".hidden ..dots x..", "-"},
      {"/../../etc", ".. .. etc", "etc"},
      {"/a/..;x=1/b", "a .. b", "b"},
      {"/caf%C3%A9/%ff/%zz/a%", "café \uFFFD %zz a%", "-"},
      {"/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t", "a b c d e f g h i j k l m n o p q r s t", "-"}
    };
    PathPattern.Segments s = new PathPattern.Segments();
    for (String[] c : cases) {
      s.of(c[0]);
      List<String> routed = c[1].isEmpty() ? List.of() : List.of(c[1].split(" "));
      assertEquals(routed, segments(s), c[0]);
      if (c[2].equals("-")) {
        assertNull(s.resolved(), c[0] + " has one reading");
      } else {
        assertEquals(List.of(c[2].split(" ")), segments(s.resolved()), c[0] + " resolved");
      }
    }
  }

  /**
   * Each spelling that was served to {@code /api/v1/lead/{id}} on Jersey while no rule counted it:
   * an encoded {@code /}, {@code ;} or {@code .}, or a dot segment, was read as path structure.
   */
  @Test
  void aCaptureSpelledAsPathStructureIsTheSegmentTheResourceReceives() {
    String[][] cases = {
      {"..", ".."},
      {".", "."},
      {"%2e%2e", ".."},
      {"%2e", "."},
      {".%2e", ".."},
      {"%3B", ";"},
      {"%3Bx", ";x"},
      {"%2F", "/"},
      {"x%2F..", "x/.."},
      {"%2E%2E%2f", "../"},
      {"..%2F..%2F..", "../../.."},
      {"%2e%2e%2F%2e%2e%2F%2e%2e", "../../.."},
      {"x1%2F..%2Fvictim", "x1/../victim"}
    };
    PathPattern lead = PathPattern.pattern("/api/v1/lead/{id}");
    PathPattern api = PathPattern.prefix("/api");
    PathPattern any = PathPattern.pattern("/api/**");
    PathPattern.Segments s = new PathPattern.Segments();
    for (String[] c : cases) {
      s.of("/api/v1/lead/" + c[0]);
      assertEquals(Map.of("id", c[1]), lead.match(s), c[0]);
      assertEquals(Map.of(), api.match(s), c[0]);
      assertEquals(Map.of(), any.match(s), c[0]);
    }
    PathPattern product = PathPattern.pattern("/v1/organizations/{orgId}/product/*");
    for (String spelling : new String[] {"%2e%2e", "%3B1", "1%2F.."}) {
      s.of("/v1/organizations/acme/product/" + spelling);
      assertEquals(Map.of("orgId", "acme"), product.match(s), spelling);
    }
    s.of("/v1/organizations/x1%2F..%2Fvictim/product/1");
    assertEquals(Map.of("orgId", "x1/../victim"), product.match(s), "never the tenant 'victim'");
    assertNull(s.resolved(), "an encoded '/' is no separator in either reading");
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
          "/api/x/%2e%2e/v1/report",
          "/%61pi/v1/report"
        }) {
      assertEquals(Map.of(), match("/api/v1/report", spelling), spelling);
    }
    PathPattern.Segments s = new PathPattern.Segments();
    s.of("/../../etc");
    assertEquals(List.of("etc"), segments(s.resolved()), "never above the root");
  }

  @Test
  void anEncodedSeparatorIsDataInsideItsSegment() {
    // No container routes these to /api/v1/report: Jersey matches literals against the encoded
    // path, and servlet containers refuse an encoded '/' (400) by default.
    assertNull(match("/api/v1/report", "/api%2Fv1%2Freport"));
    assertNull(match("/api/v1/report", "/api/v1/report%3Bx=1"));
    assertEquals(Map.of("id", "a;b=c"), match("/lead/{id}", "/lead/a%3Bb=c;d=e"));
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
    assertEquals(Map.of(), p.match("/api"));
    assertEquals(Map.of(), p.match("/api/v1"));
    assertNull(p.match("/apiary"));
  }

  @Test
  void badPatternsAreRefused() {
    assertThrows(IllegalArgumentException.class, () -> PathPattern.pattern("api"));
    assertThrows(IllegalArgumentException.class, () -> PathPattern.pattern("/a*b"));
    assertThrows(IllegalArgumentException.class, () -> PathPattern.pattern("/{id"));
    assertThrows(IllegalArgumentException.class, () -> PathPattern.pattern("/{}"));
  }
}
