package dev.sluice.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;

/**
 * The invariant behind every rule's path: however a client spells a path, the segments Sluice reads
 * are the segments the container routes on. A path is generated as its segments' values (any
 * characters, separators, parameters' {@code ;}, {@code %} and dots included), then spelled as a
 * client may: any character percent-encoded in upper or lower hex, path parameters on any segment,
 * doubled and trailing slashes. Reading the spelling gives back the values, one for one; and the
 * servlet reading is those values with dot segments resolved, present only when there are some.
 */
class PathSpellingTest {

  /** Characters a value draws from: what makes paths ambiguous, and some that need UTF-8. */
  private static final String ALPHABET = "ab0/;.%=?#+ ~\\é€😀";

  private static Arbitrary<String> value() {
    Arbitrary<String> any =
        Arbitraries.of(ALPHABET.codePoints().mapToObj(Character::toString).toList())
            .list()
            .ofMinSize(1)
            .ofMaxSize(6)
            .map(l -> String.join("", l));
    return Arbitraries.frequencyOf(
        Tuple.of(6, any), Tuple.of(1, Arbitraries.of(".", "..", "...", "%2e", "a.b")));
  }

  @Provide
  Arbitrary<Spelled> paths() {
    return Combinators.combine(value().list().ofMinSize(0).ofMaxSize(6), Arbitraries.longs())
        .as(Spelled::of);
  }

  /** A path's values and one client's spelling of them. */
  record Spelled(List<String> values, String raw) {
    static Spelled of(List<String> values, long seed) {
      Random r = new Random(seed);
      StringBuilder b = new StringBuilder();
      for (String v : values) {
        b.append(r.nextInt(8) == 0 ? "//" : "/");
        b.append(PathSpellings.encode(v, r, 5));
        if (r.nextInt(4) == 0) {
          b.append(
              List.of(";", ";x=1", ";jsessionid=" + r.nextInt(99), ";a=%2F").get(r.nextInt(4)));
        }
      }
      if (values.isEmpty() || r.nextBoolean()) {
        b.append('/');
      }
      return new Spelled(values, b.toString());
    }
  }

  @Property(tries = 2_000)
  void theSegmentsReadAreTheValuesSpelled(@ForAll("paths") Spelled p) {
    PathPattern.Segments s = new PathPattern.Segments();
    s.of(p.raw());
    assertEquals(p.values(), read(s), p.raw());
    List<String> resolved = resolve(p.values());
    if (resolved == null) {
      assertNull(s.resolved(), p.raw());
    } else {
      assertEquals(resolved, read(s.resolved()), p.raw());
    }
  }

  @Property(tries = 1_000)
  void aCaptureIsTheValueSpelled(@ForAll("paths") Spelled p) {
    List<String> values = new ArrayList<>(List.of("api", "lead"));
    values.addAll(p.values().isEmpty() ? List.of("x") : p.values().subList(0, 1));
    Spelled lead = Spelled.of(values, p.raw().length());
    assertEquals(
        java.util.Map.of("id", values.get(2)),
        PathPattern.pattern("/api/lead/{id}").match(lead.raw()),
        lead.raw());
  }

  private static List<String> read(PathPattern.Segments s) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < s.size(); i++) {
      out.add(s.get(i));
    }
    return out;
  }

  /** The values with dot segments resolved (RFC 3986, 5.2.4), or null when there are none. */
  private static List<String> resolve(List<String> values) {
    if (values.stream().noneMatch(v -> v.equals(".") || v.equals(".."))) {
      return null;
    }
    List<String> out = new ArrayList<>();
    for (String v : values) {
      if (v.equals("..")) {
        if (!out.isEmpty()) {
          out.remove(out.size() - 1);
        }
      } else if (!v.equals(".")) {
        out.add(v);
      }
    }
    return out;
  }
}
