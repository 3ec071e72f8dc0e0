package dev.sluice;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Map;
import org.junit.jupiter.api.Test;

class PathPatternTest {

  private static Map<String, String> match(String pattern, String path) {
    return PathPattern.pattern(pattern).match(PathPattern.normalize(path));
  }

  @Test
  void wildcardsAndCaptures() {
    assertEquals(Map.of("orgId", "42"), match("/v1/organizations/{orgId}/product/*", "/v1/organizations/42/product/7"));
    assertNull(match("/v1/organizations/{orgId}/product/*", "/v1/organizations/42/product/7/x"));
    assertEquals(Map.of(), match("/api/**", "/api"));
    assertEquals(Map.of(), match("/api/**", "/api/v1/report"));
    assertNull(match("/api/**", "/apix/v1"));
    assertEquals(Map.of("id", "9"), match("/**/lead/{id}", "/api/v1/lead/9"));
    assertNull(match("/v1/*", "/v1"));
  }

  @Test
  void spellingsOfAPathCannotDodgeARule() {
    for (String spelling : new String[] {"/api/v1/report", "/api/v1/report/", "/api//v1/report", "//api/v1//report//",
        "/api/./v1/report", "/api/x/../v1/report", "/api%2Fv1%2Freport", "/%61pi/v1/report"}) {
      assertEquals(Map.of(), match("/api/v1/report", spelling), spelling);
    }
    assertEquals("/etc", PathPattern.normalize("/../../etc"), "never above the root");
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
