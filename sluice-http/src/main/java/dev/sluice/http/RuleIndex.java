package dev.sluice.http;

import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The enabled rules indexed by method and path segment, so that a request tests only the rules that
 * can match it, however many there are. Each method has a tree of path segments (rules for every
 * method have one of their own): a pattern's literal segments are edges looked up by the request
 * path's segment, its {@code *} and {@code {name}} segments one wildcard edge. A pattern ends at a
 * node; a prefix is kept where it ends and is a candidate for every path that reaches it; a pattern
 * with {@code **} is kept where its first {@code **} stands and is a candidate for every path that
 * reaches there. Looking up a path walks the literal edge and the wildcard edge of each node it
 * reaches, so its cost grows with the path's length and the number of wildcard patterns sharing its
 * literal segments, not with the number of rules.
 *
 * <p>The candidates are a superset of the matching rules, exact on method, and exact on path for
 * patterns without {@code **} and for prefixes; the caller matches each candidate's pattern. A set
 * of at most {@link #LINEAR_MAX} rules is not walked: every rule of the method is a candidate. HEAD
 * is looked up under GET as well, as {@link Rule#covers} says. Immutable once built; lookups are
 * thread-safe.
 */
final class RuleIndex {

  private static final int[] NONE = new int[0];

  /**
   * Up to this many rules, a request's candidates are every rule of its method, listed ahead: its
   * path is matched against each, which costs less than walking the trees.
   */
  static final int LINEAR_MAX = 8;

  /** Rules for every method. */
  private final Node all = new Node();

  private final Map<String, Node> byMethod = new HashMap<>();

  /**
   * With at most {@link #LINEAR_MAX} rules: the rules of each method named by a rule (HEAD always),
   * in order; else null.
   */
  private final Map<String, int[]> linear;

  /** With at most {@link #LINEAR_MAX} rules: the rules for every method; else null. */
  private final int[] linearAll;

  /** Indexes {@code rules}; a candidate is named by its position in the list. */
  RuleIndex(List<Rule> rules) {
    if (rules.size() <= LINEAR_MAX) {
      linear = new HashMap<>();
      Set<String> methods = new java.util.HashSet<>(Set.of("HEAD"));
      rules.forEach(r -> methods.addAll(r.methods()));
      for (String m : methods) {
        linear.put(m, covering(rules, m));
      }
      linearAll = covering(rules, null);
      return;
    }
    linear = null;
    linearAll = null;
    for (int i = 0; i < rules.size(); i++) {
      Set<String> methods = rules.get(i).methods();
      PathPattern p = rules.get(i).pattern();
      if (methods.isEmpty()) {
        add(all, p, i);
      } else {
        for (String m : methods) {
          add(byMethod.computeIfAbsent(m, x -> new Node()), p, i);
        }
      }
    }
  }

  /** The positions of the rules covering {@code method}; of the rules for every method if null. */
  private static int[] covering(List<Rule> rules, String method) {
    return java.util.stream.IntStream.range(0, rules.size())
        .filter(
            i ->
                method == null
                    ? rules.get(i).methods().isEmpty()
                    : Rule.covers(rules.get(i).methods(), method))
        .toArray();
  }

  private static void add(Node root, PathPattern p, int rule) {
    Node n = root;
    for (int i = 0; i < p.size(); i++) {
      if (p.isAny(i)) {
        n.reached = append(n.reached, rule);
        return;
      }
      String literal = p.literal(i);
      n = literal == null ? n.wildcard() : n.literal(literal);
    }
    if (p.isPrefix()) {
      n.reached = append(n.reached, rule);
    } else {
      n.ends = append(n.ends, rule);
    }
  }

  private static int[] append(int[] a, int v) {
    int[] b = Arrays.copyOf(a, a.length + 1);
    b[a.length] = v;
    return b;
  }

  /**
   * Fills {@code out} with the positions, in order and each once, of the rules whose method covers
   * {@code method} (upper case) and whose path can match {@code path} or {@code resolved} (may be
   * null).
   */
  void candidates(
      String method, PathPattern.Segments path, PathPattern.Segments resolved, Candidates out) {
    if (linear != null) {
      int[] listed = linear.get(method);
      out.view = listed == null ? linearAll : listed;
      out.size = out.view.length;
      return;
    }
    out.view = out.found;
    out.size = 0;
    Node m = byMethod.isEmpty() ? null : byMethod.get(method);
    Node get = method.equals("HEAD") ? byMethod.get("GET") : null;
    walk(all, path, resolved, out);
    if (m != null) {
      walk(m, path, resolved, out);
    }
    if (get != null) {
      walk(get, path, resolved, out);
    }
    out.sortDistinct();
  }

  private static void walk(
      Node root, PathPattern.Segments path, PathPattern.Segments resolved, Candidates out) {
    walk(root, path, 0, out);
    if (resolved != null) {
      walk(root, resolved, 0, out);
    }
  }

  private static void walk(Node n, PathPattern.Segments path, int depth, Candidates out) {
    out.add(n.reached);
    if (depth == path.size()) {
      out.add(n.ends);
      return;
    }
    Node next = n.find(path, depth);
    if (next != null) {
      walk(next, path, depth + 1, out);
    }
    if (n.wildcard != null) {
      walk(n.wildcard, path, depth + 1, out);
    }
  }

  /** One node of a method's tree: the path read so far. */
  private static final class Node {
    /** Rules that are candidates for every path reaching here: prefixes, and patterns at a **. */
    int[] reached = NONE;

    /** Patterns that end here. */
    int[] ends = NONE;

    /** The literal edges, open addressing (capacity a power of two, at most half full). */
    private String[] keys = new String[0];

    private Node[] children = new Node[0];
    private int count;
    private Node wildcard;

    Node wildcard() {
      if (wildcard == null) {
        wildcard = new Node();
      }
      return wildcard;
    }

    Node literal(String key) {
      if (2 * (count + 1) > keys.length) {
        grow();
      }
      int mask = keys.length - 1;
      int i = spread(key.hashCode()) & mask;
      while (keys[i] != null) {
        if (keys[i].equals(key)) {
          return children[i];
        }
        i = (i + 1) & mask;
      }
      keys[i] = key;
      children[i] = new Node();
      count++;
      return children[i];
    }

    private void grow() {
      String[] oldKeys = keys;
      Node[] oldChildren = children;
      keys = new String[Math.max(4, 2 * oldKeys.length)];
      children = new Node[keys.length];
      int mask = keys.length - 1;
      for (int j = 0; j < oldKeys.length; j++) {
        if (oldKeys[j] != null) {
          int i = spread(oldKeys[j].hashCode()) & mask;
          while (keys[i] != null) {
            i = (i + 1) & mask;
          }
          keys[i] = oldKeys[j];
          children[i] = oldChildren[j];
        }
      }
    }

    /** The literal edge for segment {@code s} of {@code path}, or null. */
    Node find(PathPattern.Segments path, int s) {
      if (count == 0) {
        return null;
      }
      int mask = keys.length - 1;
      int i = spread(path.hash(s)) & mask;
      String k;
      while ((k = keys[i]) != null) {
        if (path.is(s, k)) {
          return children[i];
        }
        i = (i + 1) & mask;
      }
      return null;
    }

    private static int spread(int h) {
      return h ^ (h >>> 16);
    }
  }

  /** Rule positions found for one request; one per thread, reused. */
  static final class Candidates {
    /** The positions found by a walk. */
    private int[] found = new int[16];

    /** What {@link #get} reads: {@link #found}, or a list of the index's own, never written. */
    private int[] view = found;

    private int size;

    void add(int[] rules) {
      if (rules.length == 0) {
        return;
      }
      if (size + rules.length > found.length) {
        found = Arrays.copyOf(found, Math.max(2 * found.length, size + rules.length));
        view = found;
      }
      System.arraycopy(rules, 0, found, size, rules.length);
      size += rules.length;
    }

    private void sortDistinct() {
      if (size < 2) {
        return;
      }
      Arrays.sort(found, 0, size);
      int n = 1;
      for (int i = 1; i < size; i++) {
        if (found[i] != found[n - 1]) {
          found[n++] = found[i];
        }
      }
      size = n;
    }

    int size() {
      return size;
    }

    int get(int i) {
      return view[i];
    }
  }
}
