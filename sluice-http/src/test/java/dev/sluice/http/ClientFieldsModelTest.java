package dev.sluice.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Tier;
import dev.sluice.spi.FakeClock;
import dev.sluice.spi.ReferenceCounterStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.statistics.Statistics;

/**
 * The fields a client reads, against a model, over generated rule sets (1 to 4 rules of fixed
 * windows, sliding windows and token buckets, on overlapping paths) and request sequences (paths,
 * two keys, clock steps). Every response's {@code RateLimit-Policy} names exactly the tiers of the
 * rules that match, and each {@code RateLimit} item's {@code r} and {@code t} are what the model
 * derives from the requests it admitted: a refused request counts nowhere. A limiter with a deny
 * cache answers every request exactly as one without, headers and quotas alike, whether its store
 * or its deny cache answered.
 */
class ClientFieldsModelTest {

  private static final String[] PATTERNS = {"/**", "/a/**", "/a/b", "/c/**"};
  private static final String[] PATHS = {"/a/b", "/a/x", "/c/y", "/d"};
  private static final String[] KEYS = {"k1", "k2"};
  private static final long[] PERIODS = {1_000, 2_000, 5_000};

  /** A rule: its algorithm, path pattern and tiers (a token bucket's: rate, period, burst). */
  record RuleSpec(Algorithm algorithm, int pattern, List<long[]> tiers) {
    @Override
    public String toString() {
      StringBuilder sb = new StringBuilder(algorithm + " " + PATTERNS[pattern]);
      for (long[] t : tiers) {
        sb.append(' ').append(t[0]).append('/').append(t[1]).append("ms");
        if (t.length > 2) {
          sb.append(" burst ").append(t[2]);
        }
      }
      return sb.toString();
    }
  }

  /** One step: the clock moves {@code gapMillis}, then a request to a path with a key. */
  record Step(long gapMillis, int path, int key) {}

  @Provide
  Arbitrary<List<RuleSpec>> rules() {
    Arbitrary<Algorithm> algorithms =
        Arbitraries.of(Algorithm.FIXED_WINDOW, Algorithm.SLIDING_WINDOW, Algorithm.TOKEN_BUCKET);
    Arbitrary<Integer> patterns = Arbitraries.integers().between(0, PATTERNS.length - 1);
    Arbitrary<Integer> tierCount = Arbitraries.integers().between(1, 2);
    Arbitrary<Integer> periods = Arbitraries.integers().between(0, PERIODS.length - 1);
    Arbitrary<Long> limits = Arbitraries.longs().between(1, 5);
    Arbitrary<RuleSpec> rule =
        Combinators.combine(
                algorithms, patterns, tierCount, periods, limits, limits.list().ofSize(2), limits)
            .as(
                (algorithm, pattern, count, period, limit, limits2, burst) -> {
                  List<long[]> tiers = new ArrayList<>();
                  if (algorithm == Algorithm.TOKEN_BUCKET) {
                    tiers.add(new long[] {limit, PERIODS[period], burst});
                  } else {
                    for (int i = 0; i < count; i++) {
                      tiers.add(
                          new long[] {
                            i == 0 ? limit : limit + limits2.get(i),
                            PERIODS[(period + i) % PERIODS.length]
                          });
                    }
                  }
                  return new RuleSpec(algorithm, pattern, tiers);
                });
    return rule.list().ofMinSize(1).ofMaxSize(4);
  }

  @Provide
  Arbitrary<List<Step>> steps() {
    Arbitrary<Long> gaps =
        Arbitraries.frequencyOf(
            Tuple.of(6, Arbitraries.longs().between(0, 200)),
            Tuple.of(3, Arbitraries.longs().between(0, 2_500)),
            Tuple.of(1, Arbitraries.longs().between(0, 12_000)));
    Arbitrary<Integer> paths =
        Arbitraries.frequencyOf(
            Tuple.of(5, Arbitraries.just(0)),
            Tuple.of(2, Arbitraries.just(1)),
            Tuple.of(2, Arbitraries.just(2)),
            Tuple.of(1, Arbitraries.just(3)));
    Arbitrary<Integer> keys =
        Arbitraries.frequencyOf(Tuple.of(4, Arbitraries.just(0)), Tuple.of(1, Arbitraries.just(1)));
    return Combinators.combine(gaps, paths, keys).as(Step::new).list().ofMaxSize(150);
  }

  @Property(tries = 400)
  void everyResponseTellsTheModelsTruthWhoeverAnswered(
      @ForAll("rules") List<RuleSpec> specs, @ForAll("steps") List<Step> steps) {
    RuleSet.Builder b = RuleSet.builder();
    for (int i = 0; i < specs.size(); i++) {
      b.rule(rule("r" + i, specs.get(i)));
    }
    RuleSet rules = b.build();
    FakeClock clock = new FakeClock();
    RequestLimiter cached =
        RequestLimiter.builder(new ReferenceCounterStore()).rules(rules).clock(clock).build();
    RequestLimiter plain =
        RequestLimiter.builder(new ReferenceCounterStore())
            .rules(rules)
            .clock(clock)
            .denyCacheSize(0)
            .build();
    Model model = new Model(specs);
    for (int i = 0; i < steps.size(); i++) {
      Step s = steps.get(i);
      clock.advanceMillis(s.gapMillis());
      long now = clock.millis();
      TestRequest request = TestRequest.get(PATHS[s.path()]).header("K", KEYS[s.key()]);
      Optional<Decision> fromCache = cached.decide(request);
      Optional<Decision> fromStore = plain.decide(request);
      String what = "request " + i + " " + PATHS[s.path()] + " " + KEYS[s.key()];
      assertEquals(fromStore.isPresent(), fromCache.isPresent(), what);
      boolean expected = model.decide(s.path(), s.key(), now);
      if (fromStore.isEmpty()) {
        assertTrue(expected, what);
        continue;
      }
      Decision d = fromStore.get();
      Decision c = fromCache.get();
      Statistics.label("answered by").collect(c.fromDenyCache() ? "deny cache" : "store");
      assertEquals(expected, d.allowed(), what + ": " + d);
      Map<String, String> store = headers(d, now);
      assertEquals(store, headers(c, now), what + " (deny cache: " + c.fromDenyCache() + ")");
      assertEquals(d.quotas(), c.quotas(), what);
      assertEquals(model.policyField(s.path()), store.get("RateLimit-Policy"), what);
      assertEquals(model.stateField(s.path(), s.key(), now), store.get("RateLimit"), what);
      assertBindingIsAnItem(store, what);
    }
  }

  /** {@code X-RateLimit-Limit}, {@code -Remaining} and {@code -Reset} are one item's q, r and t. */
  private static void assertBindingIsAnItem(Map<String, String> h, String what) {
    List<String> policies = List.of(h.get("RateLimit-Policy").split(", ", -1));
    List<String> states = List.of(h.get("RateLimit").split(", ", -1));
    for (int i = 0; i < policies.size(); i++) {
      String q = policies.get(i).replaceAll(".*;q=(\\d+);.*", "$1");
      String r = states.get(i).replaceAll(".*;r=(\\d+);.*", "$1");
      String t = states.get(i).replaceAll(".*;t=(\\d+)$", "$1");
      if (q.equals(h.get("X-RateLimit-Limit"))
          && r.equals(h.get("X-RateLimit-Remaining"))
          && t.equals(h.get("X-RateLimit-Reset"))) {
        return;
      }
    }
    throw new AssertionError(what + ": X-RateLimit-* describe no quota named: " + h);
  }

  private static Map<String, String> headers(Decision d, long now) {
    Map<String, String> h = new LinkedHashMap<>();
    for (Map.Entry<String, String> e :
        RateLimitHeaders.of(
            d,
            EnumSet.allOf(RateLimitHeaders.Family.class),
            RateLimitHeaders.ResetFormat.DELTA_SECONDS,
            now)) {
      h.put(e.getKey(), e.getValue());
    }
    return h;
  }

  private static Rule rule(String id, RuleSpec spec) {
    Rule.Builder r =
        Rule.builder(id).path(PATTERNS[spec.pattern()]).key("header:K").algorithm(spec.algorithm());
    for (long[] t : spec.tiers()) {
      r.tier(
          t.length > 2
              ? Tier.of(t[0], Duration.ofMillis(t[1]), t[2])
              : Tier.of(t[0], Duration.ofMillis(t[1])));
    }
    return r.build();
  }

  /**
   * What each tier should report, from the requests admitted: a fixed window counts those in its
   * window; a sliding window weighs the previous window's by the part of it still covered; a token
   * bucket is a GCRA over the admitted requests' arrival times.
   */
  static final class Model {
    private final List<RuleSpec> specs;

    /** Per rule, tier and key: admission instants (windows) or the theoretical arrival time. */
    private final Map<String, List<Long>> admitted = new HashMap<>();

    private final Map<String, Long> tat = new HashMap<>();

    Model(List<RuleSpec> specs) {
      this.specs = specs;
    }

    static boolean matches(String pattern, String path) {
      return pattern.endsWith("/**")
          ? pattern.equals("/**") || path.startsWith(pattern.substring(0, pattern.length() - 2))
          : pattern.equals(path);
    }

    /** Decides a request and counts it if admitted; returns whether it was. */
    boolean decide(int path, int key, long now) {
      boolean pass = true;
      for (int r = 0; r < specs.size(); r++) {
        RuleSpec s = specs.get(r);
        if (!matches(PATTERNS[s.pattern()], PATHS[path])) {
          continue;
        }
        for (int t = 0; t < s.tiers().size(); t++) {
          pass &= passes(s, r, t, key, now);
        }
      }
      if (pass) {
        for (int r = 0; r < specs.size(); r++) {
          RuleSpec s = specs.get(r);
          if (matches(PATTERNS[s.pattern()], PATHS[path])) {
            for (int t = 0; t < s.tiers().size(); t++) {
              admit(s, r, t, key, now);
            }
          }
        }
      }
      return pass;
    }

    private static String id(int rule, int tier, int key) {
      return rule + "/" + tier + "/" + key;
    }

    private List<Long> log(int r, int t, int key) {
      return admitted.computeIfAbsent(id(r, t, key), k -> new ArrayList<>());
    }

    private long count(int r, int t, int key, long from, long to) {
      return log(r, t, key).stream().filter(x -> x >= from && x < to).count();
    }

    private static long interval(long[] tier) {
      return Math.max(1, tier[1] * 1_000_000 / tier[0]);
    }

    private boolean passes(RuleSpec s, int r, int t, int key, long now) {
      long[] tier = s.tiers().get(t);
      long limit = tier[0];
      long period = tier[1];
      long start = Math.floorDiv(now, period) * period;
      return switch (s.algorithm()) {
        case FIXED_WINDOW -> count(r, t, key, start, start + period) + 1 <= limit;
        case SLIDING_WINDOW ->
            decayed(r, t, key, now, period) + count(r, t, key, start, start + period) + 1
                <= limit + 1e-9;
        default -> {
          long nowNanos = now * 1_000_000;
          long at = Math.max(tat.getOrDefault(id(r, t, key), 0L), nowNanos) + interval(tier);
          yield at <= nowNanos + tier[2] * interval(tier);
        }
      };
    }

    private double decayed(int r, int t, int key, long now, long period) {
      long start = Math.floorDiv(now, period) * period;
      double f = (now - start) * (1.0 / period);
      return count(r, t, key, start - period, start) * (1 - f);
    }

    private void admit(RuleSpec s, int r, int t, int key, long now) {
      if (s.algorithm() == Algorithm.TOKEN_BUCKET) {
        long[] tier = s.tiers().get(t);
        tat.put(
            id(r, t, key),
            Math.max(tat.getOrDefault(id(r, t, key), 0L), now * 1_000_000) + interval(tier));
      } else {
        log(r, t, key).add(now);
      }
    }

    private String name(int r, int t) {
      RuleSpec s = specs.get(r);
      long[] tier = s.tiers().get(t);
      return "\"r"
          + r
          + (s.tiers().size() > 1 ? "-" + Tier.of(1, Duration.ofMillis(tier[1])).periodText() : "")
          + "\"";
    }

    /** The RateLimit-Policy field for a path: every tier of every rule that matches it. */
    String policyField(int path) {
      List<String> items = new ArrayList<>();
      for (int r = 0; r < specs.size(); r++) {
        RuleSpec s = specs.get(r);
        if (!matches(PATTERNS[s.pattern()], PATHS[path])) {
          continue;
        }
        for (int t = 0; t < s.tiers().size(); t++) {
          long[] tier = s.tiers().get(t);
          long q = tier.length > 2 ? tier[2] : tier[0];
          long w =
              tier.length > 2
                  ? (long) Math.ceil((double) tier[2] * tier[1] / tier[0] / 1000.0 - 1e-12)
                  : tier[1] / 1000;
          items.add(name(r, t) + ";q=" + q + ";w=" + w);
        }
      }
      return String.join(", ", items);
    }

    /** The RateLimit field for a path and key at {@code now}, after the request was decided. */
    String stateField(int path, int key, long now) {
      List<String> items = new ArrayList<>();
      for (int r = 0; r < specs.size(); r++) {
        RuleSpec s = specs.get(r);
        if (!matches(PATTERNS[s.pattern()], PATHS[path])) {
          continue;
        }
        for (int t = 0; t < s.tiers().size(); t++) {
          long[] state = state(s, r, t, key, now);
          items.add(name(r, t) + ";r=" + state[0] + ";t=" + ceilSeconds(state[1]));
        }
      }
      return String.join(", ", items);
    }

    /** A tier's permits left and milliseconds until its count is back to zero. */
    private long[] state(RuleSpec s, int r, int t, int key, long now) {
      long[] tier = s.tiers().get(t);
      long limit = tier[0];
      long period = tier[1];
      long start = Math.floorDiv(now, period) * period;
      long current = count(r, t, key, start, start + period);
      return switch (s.algorithm()) {
        case FIXED_WINDOW -> new long[] {Math.max(0, limit - current), start + period - now};
        case SLIDING_WINDOW -> {
          long previous = count(r, t, key, start - period, start);
          long used = (long) Math.ceil(decayed(r, t, key, now, period) + current - 1e-9);
          long resetAt = current > 0 ? start + 2 * period : previous > 0 ? start + period : now;
          yield new long[] {Math.max(0, limit - used), resetAt - now};
        }
        default -> {
          long nowNanos = now * 1_000_000;
          long interval = interval(tier);
          long settled = Math.max(tat.getOrDefault(id(r, t, key), 0L), nowNanos);
          long left =
              Math.max(0, Math.min(tier[2], (nowNanos + tier[2] * interval - settled) / interval));
          long full = Math.max(now, -Math.floorDiv(-settled, 1_000_000));
          yield new long[] {left, full - now};
        }
      };
    }

    private static long ceilSeconds(long millis) {
      return -Math.floorDiv(-millis, 1000);
    }
  }
}
