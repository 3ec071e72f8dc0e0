package dev.sluice.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.Outcome;
import dev.sluice.spi.FakeClock;
import dev.sluice.spi.RecordingStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/**
 * The rule index against the linear matcher as its model: over generated rule sets of 1 to 5,000
 * rules (methods, literal segments, {@code *}, {@code **}, captures and prefixes) and generated
 * spellings of paths (percent-encoding, path parameters, dot segments, doubled slashes), the rules
 * found through the index are exactly the rules whose method and pattern match, in rule order.
 */
class RuleIndexTest {

  /** Segment values rules and paths share, some of which need encoding or are dots. */
  private static final List<String> VALUES =
      List.of("api", "v1", "v2", "users", "orders", "a", "b", "x.y", "é", "a b", "a/b", "a;b");

  private static final List<String> METHODS = List.of("GET", "HEAD", "POST", "DELETE");

  /** A generated rule set: {@code size} rules drawn from {@code seed}. */
  private static List<Rule> rules(int size, long seed) {
    Random r = new Random(seed);
    List<Rule> rules = new ArrayList<>(size);
    for (int i = 0; i < size; i++) {
      Rule.Builder b =
          Rule.builder("r" + i)
              .key("header:X-Key")
              .algorithm(Algorithm.FIXED_WINDOW)
              .tier(1_000_000_000, Duration.ofMinutes(1));
      if (r.nextBoolean()) {
        List<String> methods = new ArrayList<>();
        for (int m = 0; m <= r.nextInt(2); m++) {
          methods.add(METHODS.get(r.nextInt(METHODS.size())));
        }
        b.methods(methods.toArray(new String[0]));
      }
      StringBuilder path = new StringBuilder();
      boolean prefix = r.nextInt(5) == 0;
      int segments = r.nextInt(5);
      for (int s = 0; s < segments; s++) {
        path.append('/');
        int pick = r.nextInt(10);
        if (!prefix && pick == 0) {
          path.append('*');
        } else if (!prefix && pick == 1) {
          path.append("**");
        } else if (!prefix && pick == 2) {
          path.append("{c").append(s).append('}');
        } else {
          path.append(PathSpellings.encode(VALUES.get(r.nextInt(VALUES.size())), r, 5));
        }
      }
      String p = path.isEmpty() ? "/" : path.toString();
      rules.add((prefix ? b.pathPrefix(p) : b.path(p)).build());
    }
    return rules;
  }

  /** A generated request path: values from {@link #VALUES} and a few others, spelled. */
  private static String path(Random r) {
    List<String> values = new ArrayList<>();
    int n = r.nextInt(6);
    for (int i = 0; i < n; i++) {
      int pick = r.nextInt(12);
      values.add(
          pick == 0
              ? ".."
              : pick == 1 ? "." : pick == 2 ? "other" : VALUES.get(r.nextInt(VALUES.size())));
    }
    return PathSpellingTest.Spelled.of(values, r.nextLong()).raw();
  }

  /** The linear matcher: every rule in order, its method, then its pattern on either reading. */
  private static List<Integer> linear(
      List<Rule> rules,
      List<PathPattern> patterns,
      String method,
      PathPattern.Segments path,
      boolean servlet) {
    PathPattern.Segments resolved = servlet ? path.resolved() : null;
    List<Integer> out = new ArrayList<>();
    for (int i = 0; i < rules.size(); i++) {
      PathPattern p = patterns.get(i);
      if (Rule.covers(rules.get(i).methods(), method)
          && (p.match(path) != null || (resolved != null && p.match(resolved) != null))) {
        out.add(i);
      }
    }
    return out;
  }

  @Property(tries = 300)
  void theIndexFindsWhatTheLinearMatcherMatches(
      @ForAll @IntRange(min = 1, max = 5_000) int size, @ForAll long seed) {
    check(size, seed);
  }

  /** Both sides of {@link RuleIndex#LINEAR_MAX}, where the index lists rules by method only. */
  @Property(tries = 200)
  void aFewRulesAreFoundAsMany(@ForAll @IntRange(min = 1, max = 24) int size, @ForAll long seed) {
    check(size, seed);
  }

  private static void check(int size, long seed) {
    List<Rule> rules = rules(size, seed);
    List<PathPattern> patterns = rules.stream().map(Rule::pattern).toList();
    RuleIndex index = new RuleIndex(rules);
    RuleIndex.Candidates found = new RuleIndex.Candidates();
    PathPattern.Segments path = new PathPattern.Segments();
    Random r = new Random(~seed);
    for (int k = 0; k < 100; k++) {
      String method = METHODS.get(r.nextInt(METHODS.size()));
      String raw = path(r);
      path.of(raw);
      PathPattern.Segments resolved = path.resolved();
      index.candidates(method, path, resolved, found);
      List<Integer> matched = new ArrayList<>();
      for (int i = 0; i < found.size(); i++) {
        int c = found.get(i);
        assertTrue(i == 0 || found.get(i - 1) < c, "candidates in rule order, each once");
        PathPattern p = patterns.get(c);
        boolean matches = p.match(path) != null || (resolved != null && p.match(resolved) != null);
        assertTrue(
            Rule.covers(rules.get(c).methods(), method),
            () -> method + " " + raw + ": candidate of another method " + rules.get(c));
        assertTrue(
            matches || rules.get(c).path().contains("**") || size <= RuleIndex.LINEAR_MAX,
            () -> method + " " + raw + ": candidate that cannot match " + rules.get(c));
        if (matches) {
          matched.add(c);
        }
      }
      assertEquals(linear(rules, patterns, method, path, true), matched, method + " " + raw);
    }
  }

  /**
   * Through {@link RequestLimiter}: the rules that count a request are the ones the linear matcher
   * matches, in rule order, on both readings of a path with dot segments unless it is routed on raw
   * segments.
   */
  @Property(tries = 100)
  void aRequestIsCountedByTheRulesTheLinearMatcherMatches(
      @ForAll @IntRange(min = 1, max = 400) int size, @ForAll long seed) {
    List<Rule> rules = rules(size, seed);
    List<PathPattern> patterns = rules.stream().map(Rule::pattern).toList();
    RuleSet.Builder set = RuleSet.builder();
    rules.forEach(set::rule);
    RecordingStore store = new RecordingStore();
    RequestLimiter limiter =
        RequestLimiter.builder(store).rules(set.build()).clock(new FakeClock()).build();
    Outcome out = new Outcome();
    Random r = new Random(~seed);
    for (int k = 0; k < 30; k++) {
      String method = METHODS.get(r.nextInt(METHODS.size()));
      TestRequest request = new TestRequest(method, path(r)).header("X-Key", "k");
      if (r.nextBoolean()) {
        request.routedOnRawSegments();
      }
      PathPattern.Segments path = new PathPattern.Segments();
      path.of(request.path());
      List<String> expected = new ArrayList<>();
      for (int i : linear(rules, patterns, method, path, !request.dotSegmentsAreData())) {
        expected.add(rules.get(i).id());
      }
      assertTrue(limiter.decide(request, out));
      List<String> counted = new ArrayList<>();
      for (String c : store.take()) {
        counted.add(c.substring(0, c.indexOf(':')));
      }
      assertEquals(expected, counted, method + " " + request.path());
    }
  }

  @Test
  void headIsFoundUnderGetAndARootPrefixUnderEveryPath() {
    List<Rule> rules =
        List.of(
            Rule.builder("get")
                .methods("GET")
                .path("/api/{id}")
                .tier(1, Duration.ofSeconds(1))
                .build(),
            Rule.builder("all").pathPrefix("/").tier(1, Duration.ofSeconds(1)).build(),
            Rule.builder("root").path("/").tier(1, Duration.ofSeconds(1)).build(),
            Rule.builder("deep").path("/api/**/x").tier(1, Duration.ofSeconds(1)).build());
    List<Rule> many = new ArrayList<>(rules);
    for (int i = 0; i < RuleIndex.LINEAR_MAX; i++) {
      many.add(Rule.builder("f" + i).path("/f" + i).tier(1, Duration.ofSeconds(1)).build());
    }
    RuleIndex index = new RuleIndex(many);
    RuleIndex.Candidates found = new RuleIndex.Candidates();
    PathPattern.Segments path = new PathPattern.Segments();
    path.of("/api/7");
    index.candidates("HEAD", path, null, found);
    assertEquals(List.of(0, 1, 3), list(found));
    path.of("/");
    index.candidates("POST", path, null, found);
    assertEquals(List.of(1, 2), list(found));
    path.of("/other/x");
    index.candidates("GET", path, null, found);
    assertEquals(List.of(1), list(found));
  }

  private static List<Integer> list(RuleIndex.Candidates found) {
    List<Integer> out = new ArrayList<>();
    for (int i = 0; i < found.size(); i++) {
      out.add(found.get(i));
    }
    return out;
  }
}
