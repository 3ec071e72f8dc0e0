package dev.sluice;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A path pattern: {@code *} matches one segment, {@code **} any number (zero included), {@code
 * {name}} one segment captured as {@code name}; other segments match literally. Or a prefix, which
 * matches itself and everything below it, segment by segment. Immutable.
 *
 * <p>Paths are normalized before matching so their spelling cannot dodge a rule: percent-decoded
 * (so {@code %2F} is a separator), repeated slashes collapsed, {@code .} and {@code ..} resolved
 * (never above the root), the trailing slash dropped.
 */
final class PathPattern {

  private static final Map<String, String> NO_CAPTURES = Map.of();

  private final String source;
  private final String[] segments;
  private final boolean prefix;

  private PathPattern(String source, String[] segments, boolean prefix) {
    this.source = source;
    this.segments = segments;
    this.prefix = prefix;
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
        throw new IllegalArgumentException("bad path pattern '" + pattern + "': segment '" + s + "'");
      }
      if (!s.equals("*") && !s.equals("**") && !s.startsWith("{") && (s.contains("*") || s.contains("{"))) {
        throw new IllegalArgumentException("bad path pattern '" + pattern + "': '*' and '{name}' must fill a segment");
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
    String[] path = split(normalizedPath);
    if (prefix) {
      if (path.length < segments.length) {
        return null;
      }
      for (int i = 0; i < segments.length; i++) {
        if (!segments[i].equals(path[i])) {
          return null;
        }
      }
      return NO_CAPTURES;
    }
    Map<String, String> captures = new HashMap<>(4);
    return match(path, 0, 0, captures) ? captures : null;
  }

  private boolean match(String[] path, int p, int s, Map<String, String> captures) {
    if (s == segments.length) {
      return p == path.length;
    }
    String seg = segments[s];
    if (seg.equals("**")) {
      for (int skip = p; skip <= path.length; skip++) {
        if (match(path, skip, s + 1, captures)) {
          return true;
        }
      }
      return false;
    }
    if (p == path.length) {
      return false;
    }
    if (seg.equals("*")) {
      return match(path, p + 1, s + 1, captures);
    }
    if (seg.startsWith("{")) {
      String name = seg.substring(1, seg.length() - 1);
      String before = captures.put(name, path[p]);
      if (match(path, p + 1, s + 1, captures)) {
        return true;
      }
      if (before == null) {
        captures.remove(name);
      } else {
        captures.put(name, before);
      }
      return false;
    }
    return seg.equals(path[p]) && match(path, p + 1, s + 1, captures);
  }

  /** Decodes, collapses and resolves a request path; see the class comment. */
  static String normalize(String path) {
    String decoded = decode(path == null ? "" : path);
    List<String> out = new ArrayList<>();
    for (String seg : decoded.split("/")) {
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
    return "/" + String.join("/", out);
  }

  private static String decode(String s) {
    if (s.indexOf('%') < 0) {
      return s;
    }
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '%' && i + 2 < s.length() && hex(s.charAt(i + 1)) >= 0 && hex(s.charAt(i + 2)) >= 0) {
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

  private static String[] split(String normalized) {
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
