package dev.sluice.http;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A path pattern: {@code *} matches one segment, {@code **} any number (zero included), {@code
 * {name}} one segment captured as {@code name}; other segments match literally. Or a prefix, which
 * matches itself and everything below it, segment by segment. Matching takes time linear in the
 * path's segments times the pattern's, however many {@code **} it has. Immutable.
 *
 * <p>A request path is read as the container routes it: split on {@code /} first, then each segment
 * loses its path parameters ({@code ;name=value}) and is percent-decoded on its own. An encoded
 * {@code /}, {@code ;} or {@code .} stays inside its segment, and a capture is exactly the segment
 * the resource receives. Empty segments are dropped. That is how JAX-RS (Jersey) routes, where a
 * dot segment ({@code .}, {@code ..}, raw or encoded) is data: {@code /lead/..} reaches {@code
 * /lead/{id}} with {@code id = ".."}. A servlet container resolves dot segments out of the path
 * before it maps a servlet, so a path that has them also has a second reading, {@link
 * Segments#resolved()}, which an adapter in front of servlets counts as well.
 */
final class PathPattern {

  private static final Map<String, String> NO_CAPTURES = Map.of();
  private static final byte LITERAL = 0;
  private static final byte ONE = 1;
  private static final byte ANY = 2;
  private static final byte CAPTURE = 3;

  private final String source;
  private final String[] segments;
  private final byte[] kinds;

  /** The literal of a LITERAL segment, the name of a CAPTURE. */
  private final String[] values;

  private final boolean prefix;

  private PathPattern(String source, String[] segments, boolean prefix) {
    this.source = source;
    this.segments = segments;
    this.prefix = prefix;
    this.kinds = new byte[segments.length];
    this.values = new String[segments.length];
    for (int i = 0; i < segments.length; i++) {
      String seg = segments[i];
      if (!prefix && seg.equals("**")) {
        kinds[i] = ANY;
      } else if (!prefix && seg.equals("*")) {
        kinds[i] = ONE;
      } else if (!prefix && seg.startsWith("{")) {
        kinds[i] = CAPTURE;
        values[i] = seg.substring(1, seg.length() - 1);
      } else {
        kinds[i] = LITERAL;
        values[i] = seg;
      }
    }
  }

  /**
   * Compiles a pattern.
   *
   * @throws IllegalArgumentException naming what is wrong
   */
  static PathPattern pattern(String pattern) {
    check(pattern);
    String[] segs = segmentsOf(pattern);
    for (String s : segs) {
      if (s.startsWith("{") != s.endsWith("}") || (s.startsWith("{") && s.length() < 3)) {
        throw new IllegalArgumentException(
            "bad path pattern '" + pattern + "': segment '" + s + "'");
      }
      if (!s.equals("*")
          && !s.equals("**")
          && !s.startsWith("{")
          && (s.contains("*") || s.contains("{"))) {
        throw new IllegalArgumentException(
            "bad path pattern '" + pattern + "': '*' and '{name}' must fill a segment");
      }
    }
    return new PathPattern(pattern, segs, false);
  }

  static PathPattern prefix(String prefix) {
    check(prefix);
    return new PathPattern(prefix, segmentsOf(prefix), true);
  }

  private static void check(String p) {
    if (p == null || !p.startsWith("/")) {
      throw new IllegalArgumentException("a path must start with '/': " + p);
    }
  }

  /** The captures when {@code path} (a request path as received) matches, else null. */
  Map<String, String> match(String path) {
    Segments s = new Segments();
    s.of(path);
    return match(s);
  }

  /**
   * A request path's segments as the container routes on them (see the class comment), held as
   * offsets into one string so that matching allocates nothing; reused by one thread. A clean path
   * (no {@code %}, no {@code ;}, no dot segment) is read in place; any other is decoded segment by
   * segment into a string of its own. A path with dot segments also has the reading a servlet
   * container gives it, {@link #resolved()}: its segments are a subsequence of these, so it shares
   * their string.
   */
  static final class Segments {
    private String path = "";
    private int count;
    private int[] start = new int[16];
    private int[] end = new int[16];
    private final StringBuilder decoded = new StringBuilder();
    private Segments resolved;
    private boolean hasResolved;

    /** Reads {@code raw}, a request path as received (still percent-encoded, no query). */
    void of(String raw) {
      String p = raw == null ? "" : raw;
      hasResolved = false;
      if (!clean(p)) {
        decode(p);
      }
    }

    /**
     * The reading of a servlet container, which removes dot segments ({@code .}, and {@code ..}
     * with the segment before it, never above the root; raw or encoded alike) before it maps a
     * servlet; null when the path has no dot segment, so both readings are the same.
     */
    Segments resolved() {
      return hasResolved ? resolved : null;
    }

    /** Splits a path that needs no decoding; false (nothing kept) when it does. */
    private boolean clean(String p) {
      path = p;
      count = 0;
      int n = p.length();
      int i = 0;
      while (i < n) {
        int from = i;
        while (i < n && p.charAt(i) != '/') {
          char c = p.charAt(i);
          if (c == '%' || c == ';') {
            return false;
          }
          i++;
        }
        if (i > from) {
          if (isDot(p, from, i)) {
            return false;
          }
          add(from, i);
        }
        i++;
      }
      return true;
    }

    /** Splits on '/', cuts each segment's parameters and decodes it; notes dot segments. */
    private void decode(String p) {
      StringBuilder b = decoded;
      b.setLength(0);
      count = 0;
      boolean dots = false;
      int n = p.length();
      int i = 0;
      while (i <= n) {
        int slash = p.indexOf('/', i);
        int segEnd = slash < 0 ? n : slash;
        int valueEnd = i;
        while (valueEnd < segEnd && p.charAt(valueEnd) != ';') {
          valueEnd++;
        }
        if (valueEnd > i) {
          int from = b.length();
          PathPattern.decode(p, i, valueEnd, b);
          add(from, b.length());
          dots |= isDot(b, from, b.length());
        }
        i = segEnd + 1;
      }
      path = b.toString();
      if (dots) {
        resolve();
      }
    }

    /** Fills {@link #resolved} from these segments with the dot segments removed. */
    private void resolve() {
      Segments r = resolved;
      if (r == null) {
        r = new Segments();
        resolved = r;
      }
      r.path = path;
      r.count = 0;
      for (int i = 0; i < count; i++) {
        int len = end[i] - start[i];
        if (isDot(path, start[i], end[i])) {
          if (len == 2 && r.count > 0) {
            r.count--;
          }
        } else {
          r.add(start[i], end[i]);
        }
      }
      hasResolved = true;
    }

    private static boolean isDot(CharSequence s, int from, int to) {
      int len = to - from;
      return (len == 1 || len == 2)
          && s.charAt(from) == '.'
          && (len == 1 || s.charAt(from + 1) == '.');
    }

    private void add(int from, int to) {
      if (count == start.length) {
        start = java.util.Arrays.copyOf(start, 2 * count);
        end = java.util.Arrays.copyOf(end, 2 * count);
      }
      start[count] = from;
      end[count] = to;
      count++;
    }

    int size() {
      return count;
    }

    boolean is(int i, String literal) {
      int len = end[i] - start[i];
      return len == literal.length() && path.regionMatches(start[i], literal, 0, len);
    }

    String get(int i) {
      return path.substring(start[i], end[i]);
    }

    /** Segment {@code i}'s {@link String#hashCode()}, computed in place. */
    int hash(int i) {
      int h = 0;
      for (int k = start[i]; k < end[i]; k++) {
        h = 31 * h + path.charAt(k);
      }
      return h;
    }
  }

  /** Whether this is a prefix, whose segments are all literal. */
  boolean isPrefix() {
    return prefix;
  }

  /** How many segments the pattern has. */
  int size() {
    return kinds.length;
  }

  /** Segment {@code i}'s literal; null when it is {@code *}, {@code **} or a capture. */
  String literal(int i) {
    return kinds[i] == LITERAL ? values[i] : null;
  }

  /** Whether segment {@code i} is {@code **}. */
  boolean isAny(int i) {
    return kinds[i] == ANY;
  }

  /** The captures when the path's segments match, else null. */
  Map<String, String> match(Segments path) {
    int length = path.size();
    if (prefix) {
      if (length < segments.length) {
        return null;
      }
      for (int i = 0; i < segments.length; i++) {
        if (!path.is(i, segments[i])) {
          return null;
        }
      }
      return NO_CAPTURES;
    }
    // Made at the first capture, so a pattern that fails before one allocates nothing; a pattern
    // with captures that matches has put every one of them.
    Map<String, String> out = null;
    // Glob matching with backtracking to the last '**' only: each '**' restarts at most once per
    // path segment, so the work is O(path × pattern), never exponential.
    int p = 0;
    int s = 0;
    int starS = -1;
    int starP = -1;
    while (p < length) {
      if (s < kinds.length && kinds[s] == ANY) {
        starS = s++;
        starP = p;
      } else if (s < kinds.length && (kinds[s] != LITERAL || path.is(p, values[s]))) {
        if (kinds[s] == CAPTURE) {
          if (out == null) {
            out = new HashMap<>(4);
          }
          out.put(values[s], path.get(p));
        }
        s++;
        p++;
      } else if (starS >= 0) {
        s = starS + 1;
        p = ++starP;
      } else {
        return null;
      }
    }
    while (s < kinds.length && kinds[s] == ANY) {
      s++;
    }
    if (s < kinds.length) {
      return null;
    }
    return out == null ? NO_CAPTURES : out;
  }

  /**
   * A pattern's segments: the path read as a servlet container reads it ({@link Segments}, dot
   * segments resolved).
   */
  private static String[] segmentsOf(String pattern) {
    Segments s = new Segments();
    s.of(pattern);
    Segments r = s.resolved() == null ? s : s.resolved();
    String[] out = new String[r.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = r.get(i);
    }
    return out;
  }

  /**
   * Appends {@code s[from, to)} percent-decoded as UTF-8 (a byte sequence that is not UTF-8 reads
   * as U+FFFD); a {@code %} not followed by two hex digits stays as it is, so nothing throws.
   */
  private static void decode(String s, int from, int to, StringBuilder out) {
    int i = from;
    while (i < to) {
      char c = s.charAt(i);
      if (c != '%' || !escape(s, i, to)) {
        out.append(c);
        i++;
        continue;
      }
      // A run of escapes decodes as one byte sequence, so a multi-byte character is whole.
      java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
      while (i < to && s.charAt(i) == '%' && escape(s, i, to)) {
        bytes.write(hex(s.charAt(i + 1)) * 16 + hex(s.charAt(i + 2)));
        i += 3;
      }
      out.append(bytes.toString(StandardCharsets.UTF_8));
    }
  }

  private static boolean escape(String s, int i, int to) {
    return i + 2 < to && hex(s.charAt(i + 1)) >= 0 && hex(s.charAt(i + 2)) >= 0;
  }

  private static int hex(char c) {
    return Character.digit(c, 16);
  }

  /** The capture names of this pattern. */
  List<String> captureNames() {
    List<String> names = new ArrayList<>();
    for (String s : segments) {
      if (s.startsWith("{")) {
        names.add(s.substring(1, s.length() - 1));
      }
    }
    return names;
  }

  @Override
  public String toString() {
    return prefix ? source + " (prefix)" : source;
  }
}
