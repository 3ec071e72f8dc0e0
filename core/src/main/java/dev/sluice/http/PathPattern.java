package dev.sluice.http;

import java.io.ByteArrayOutputStream;
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
 * <p>Paths are normalized before matching so their spelling cannot dodge a rule: path parameters
 * ({@code ;name=value}, which servlet containers and JAX-RS strip before routing) are cut from
 * every segment, the rest percent-decoded (so {@code %2F} is a separator), repeated slashes
 * collapsed, {@code .} and {@code ..} resolved (never above the root), the trailing slash dropped.
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
  private final boolean captures;

  private PathPattern(String source, String[] segments, boolean prefix) {
    this.source = source;
    this.segments = segments;
    this.prefix = prefix;
    this.kinds = new byte[segments.length];
    this.values = new String[segments.length];
    boolean anyCapture = false;
    for (int i = 0; i < segments.length; i++) {
      String seg = segments[i];
      if (!prefix && seg.equals("**")) {
        kinds[i] = ANY;
      } else if (!prefix && seg.equals("*")) {
        kinds[i] = ONE;
      } else if (!prefix && seg.startsWith("{")) {
        kinds[i] = CAPTURE;
        values[i] = seg.substring(1, seg.length() - 1);
        anyCapture = true;
      } else {
        kinds[i] = LITERAL;
        values[i] = seg;
      }
    }
    this.captures = anyCapture;
  }

  /**
   * Compiles a pattern.
   *
   * @throws IllegalArgumentException naming what is wrong
   */
  static PathPattern pattern(String pattern) {
    check(pattern);
    String[] segs = split(normalize(pattern));
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
    return new PathPattern(prefix, split(normalize(prefix)), true);
  }

  private static void check(String p) {
    if (p == null || !p.startsWith("/")) {
      throw new IllegalArgumentException("a path must start with '/': " + p);
    }
  }

  /** The captures when {@code normalizedPath} matches, else null. */
  Map<String, String> match(String normalizedPath) {
    Segments s = new Segments();
    s.of(normalizedPath);
    return match(s);
  }

  /**
   * A request path's normalized segments as offsets into one string, so that matching allocates
   * nothing; reused by one thread. A clean path (no {@code %}, no {@code ;}, no {@code .} or {@code
   * ..} segment) is read as it is; any other is normalized first.
   */
  static final class Segments {
    private String path = "";
    private int count;
    private int[] start = new int[16];
    private int[] end = new int[16];

    /** Reads {@code raw}, a request path as received. */
    void of(String raw) {
      String p = raw == null ? "" : raw;
      if (!fill(p, true)) {
        fill(normalize(p), false);
      }
    }

    /**
     * Splits {@code p} into its non-empty segments. With {@code check}, false when {@code p} is not
     * clean (then nothing is kept); a normalized path is split as it is.
     */
    private boolean fill(String p, boolean check) {
      path = p;
      count = 0;
      int n = p.length();
      int i = 0;
      while (i < n) {
        int from = i;
        while (i < n && p.charAt(i) != '/') {
          char c = p.charAt(i);
          if (check && (c == '%' || c == ';')) {
            return false;
          }
          i++;
        }
        int len = i - from;
        if (len > 0) {
          if (check
              && p.charAt(from) == '.'
              && (len == 1 || (len == 2 && p.charAt(from + 1) == '.'))) {
            return false;
          }
          if (count == start.length) {
            start = java.util.Arrays.copyOf(start, 2 * count);
            end = java.util.Arrays.copyOf(end, 2 * count);
          }
          start[count] = from;
          end[count] = i;
          count++;
        }
        i++;
      }
      return true;
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
    Map<String, String> out = captures ? new HashMap<>(4) : NO_CAPTURES;
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
    return s == kinds.length ? out : null;
  }

  /**
   * Cuts path parameters, decodes, collapses and resolves a request path; see the class comment.
   */
  static String normalize(String path) {
    String raw = path == null ? "" : path;
    List<String> out = new ArrayList<>();
    for (String rawSeg : raw.split("/", -1)) {
      // Decoding may reveal more separators (%2F) and parameters (%3B): both count as such.
      for (String seg : decode(withoutParameters(rawSeg)).split("/", -1)) {
        seg = withoutParameters(seg);
        if (seg.isEmpty() || seg.equals(".")) {
          continue;
        }
        if (seg.equals("..")) {
          if (!out.isEmpty()) {
            out.remove(out.size() - 1);
          }
          continue;
        }
        out.add(seg);
      }
    }
    return "/" + String.join("/", out);
  }

  private static String withoutParameters(String segment) {
    int semi = segment.indexOf(';');
    return semi < 0 ? segment : segment.substring(0, semi);
  }

  private static String decode(String s) {
    if (s.indexOf('%') < 0) {
      return s;
    }
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '%'
          && i + 2 < s.length()
          && hex(s.charAt(i + 1)) >= 0
          && hex(s.charAt(i + 2)) >= 0) {
        bytes.write(hex(s.charAt(i + 1)) * 16 + hex(s.charAt(i + 2)));
        i += 2;
      } else {
        byte[] b = String.valueOf(c).getBytes(StandardCharsets.UTF_8);
        bytes.write(b, 0, b.length);
      }
    }
    return bytes.toString(StandardCharsets.UTF_8);
  }

  private static int hex(char c) {
    return Character.digit(c, 16);
  }

  static String[] split(String normalized) {
    return normalized.equals("/") ? new String[0] : normalized.substring(1).split("/");
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
