package dev.sluice.servlet;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The request path below the context path, read the way the container routed the request. A
 * container does not match the context path against the request target as spelled: it merges empty
 * segments, cuts each segment's parameters, percent-decodes it and resolves dot segments first, so
 * {@code //app/api}, {@code /%61pp/api}, {@code /./app/api} and {@code /x/../app/api} all reach the
 * context {@code /app} with the servlet path {@code /api}. The rules must see {@code /api} too, or
 * a client picks the spelling that no rule matches.
 */
final class ContextPath {

  private ContextPath() {}

  /**
   * The raw path below the context: what follows the segments of {@code uri} that the container
   * matched against {@code contextPath} (still percent-encoded, for the rules to read both as data
   * and with dot segments resolved). When the URI does not reach the context as a container reads
   * it (a container with rules of its own), the path the container routed, {@code servletPath +
   * pathInfo}, encoded again so that the rules decode it to exactly what the servlet received.
   *
   * @param uri the request URI as received ({@code getRequestURI()}), without the query
   * @param contextPath the context path ({@code getContextPath()}), empty for the root context
   * @param servletPath the decoded servlet path ({@code getServletPath()})
   * @param pathInfo the decoded path info ({@code getPathInfo()}), or null
   */
  static String below(String uri, String contextPath, String servletPath, String pathInfo) {
    if (uri == null) {
      uri = "";
    }
    if (contextPath == null || contextPath.isEmpty() || contextPath.equals("/")) {
      return uri;
    }
    int n = contextPath.length();
    if (uri.startsWith(contextPath)
        && (uri.length() == n || uri.charAt(n) == '/')
        && plain(uri, n)) {
      return uri.substring(n); // the common case: the context spelled as it is, nothing to resolve
    }
    int cut = cut(uri, segments(contextPath));
    return cut >= 0 ? uri.substring(cut) : encode(servletPath, pathInfo);
  }

  /** Whether the path from {@code from} has nothing a container would decode or resolve. */
  private static boolean plain(String uri, int from) {
    for (int i = from; i < uri.length(); i++) {
      char c = uri.charAt(i);
      if (c == '%' || c == ';' || (c == '.' && uri.charAt(i - 1) == '/')) {
        return false;
      }
    }
    return true;
  }

  /**
   * Where the context's segments end in {@code uri} as a container reads it: the offset after the
   * segment that completed them, provided the rest never resolves back into them ({@code
   * /app/x/../../app/api} is below {@code /app} only from its second {@code app}); -1 when the URI
   * does not reach the context.
   */
  private static int cut(String uri, List<String> context) {
    List<String> stack = new ArrayList<>();
    int cut = -1;
    int i = 0;
    int n = uri.length();
    while (i < n) {
      int end = uri.indexOf('/', i);
      if (end < 0) {
        end = n;
      }
      if (end > i) {
        int semi = uri.indexOf(';', i);
        String value = decode(uri, i, semi >= 0 && semi < end ? semi : end);
        if (value.equals("..")) {
          if (!stack.isEmpty()) {
            stack.remove(stack.size() - 1);
          }
          if (stack.size() < context.size()) {
            cut = -1;
          }
        } else if (!value.isEmpty() && !value.equals(".")) {
          stack.add(value);
          if (stack.equals(context)) {
            cut = end;
          }
        }
      }
      i = end + 1;
    }
    return cut;
  }

  /**
   * The segments of a context path as a container reads it: decoded, parameters cut, dot segments
   * resolved ({@code getContextPath()} may answer as the client spelled it, {@code /%2e/app}).
   */
  private static List<String> segments(String contextPath) {
    List<String> out = new ArrayList<>();
    for (String s : contextPath.split("/", -1)) {
      int semi = s.indexOf(';');
      String value = decode(s, 0, semi >= 0 ? semi : s.length());
      if (value.equals("..")) {
        if (!out.isEmpty()) {
          out.remove(out.size() - 1);
        }
      } else if (!value.isEmpty() && !value.equals(".")) {
        out.add(value);
      }
    }
    return out;
  }

  /**
   * Percent-decodes {@code s[from, to)} as UTF-8; a {@code %} not followed by two hex digits stays.
   */
  static String decode(String s, int from, int to) {
    int pct = s.indexOf('%', from);
    if (pct < 0 || pct >= to) {
      return s.substring(from, to);
    }
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(to - from);
    int i = from;
    while (i < to) {
      char c = s.charAt(i);
      int hi = c == '%' && i + 2 < to ? Character.digit(s.charAt(i + 1), 16) : -1;
      int lo = hi >= 0 ? Character.digit(s.charAt(i + 2), 16) : -1;
      if (lo >= 0) {
        bytes.write(hi << 4 | lo);
        i += 3;
      } else {
        int next = s.indexOf('%', i + 1);
        int stop = next < 0 || next > to ? to : next;
        byte[] b = s.substring(i, stop).getBytes(StandardCharsets.UTF_8);
        bytes.write(b, 0, b.length);
        i = stop;
      }
    }
    return bytes.toString(StandardCharsets.UTF_8);
  }

  /**
   * The container's routed path, decoded, encoded again where the rules would otherwise read it
   * differently ({@code %} and {@code ;}), so that they decode it to what the servlet received.
   */
  private static String encode(String servletPath, String pathInfo) {
    String p = (servletPath == null ? "" : servletPath) + (pathInfo == null ? "" : pathInfo);
    if (p.indexOf('%') < 0 && p.indexOf(';') < 0) {
      return p;
    }
    return p.replace("%", "%25").replace(";", "%3B");
  }
}
