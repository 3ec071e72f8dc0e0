package dev.sluice.http;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * A class of requests for load shedding, matched by method, path and headers. Its {@code priority}
 * orders shedding: 0 is critical (the worker shedder never drops it, and it may use the fleet's
 * reserve), and a higher number is shed sooner. Stripe's four, in order of importance, are critical
 * methods, writes, reads and test-mode traffic. Immutable.
 */
public final class PriorityClass {

  /** The priority of critical requests. */
  public static final int CRITICAL = 0;

  private final String name;
  private final int priority;
  private final Set<String> methods;
  private final String path;
  private final boolean prefix;
  private final Map<String, String> headers;
  private final PathPattern pattern;

  private PriorityClass(
      String name,
      int priority,
      Set<String> methods,
      String path,
      boolean prefix,
      Map<String, String> headers) {
    Objects.requireNonNull(name, "name");
    if (name.isBlank()) {
      throw new IllegalArgumentException("a priority class needs a name");
    }
    if (priority < 0) {
      throw new IllegalArgumentException("priority must be >= 0 (0 is critical)");
    }
    this.name = name;
    this.priority = priority;
    this.methods = Set.copyOf(methods);
    this.path = path;
    this.prefix = prefix;
    this.headers = Map.copyOf(headers);
    this.pattern =
        path == null ? null : prefix ? PathPattern.prefix(path) : PathPattern.pattern(path);
  }

  /** A class that matches every request until narrowed by the {@code with} methods. */
  public static PriorityClass of(String name, int priority) {
    return new PriorityClass(name, priority, Set.of(), null, false, Map.of());
  }

  /**
   * Stripe's four, first match wins: test-mode traffic ({@code X-Test-Mode: true}, priority 3),
   * writes (POST, PUT, PATCH, DELETE: 1), and everything else (reads: 2). No request is critical
   * until a class says which.
   */
  public static List<PriorityClass> defaults() {
    return List.of(
        of("test", 3).withHeader("X-Test-Mode", "true"),
        of("writes", 1).withMethods("POST", "PUT", "PATCH", "DELETE"),
        of("reads", 2));
  }

  /** Only these methods (any case); GET covers HEAD. */
  public PriorityClass withMethods(String... methods) {
    Set<String> m = new TreeSet<>();
    for (String s : methods) {
      if (s == null || s.isBlank()) {
        throw new IllegalArgumentException("methods: empty method");
      }
      m.add(s.trim().toUpperCase(Locale.ROOT));
    }
    return new PriorityClass(name, priority, m, path, prefix, headers);
  }

  /** Only paths that match a pattern ({@code *}, {@code **}, {@code {name}}, as in rules). */
  public PriorityClass withPath(String pattern) {
    return new PriorityClass(name, priority, methods, pattern, false, headers);
  }

  /** Only paths under a prefix. */
  public PriorityClass withPrefix(String prefix) {
    return new PriorityClass(name, priority, methods, prefix, true, headers);
  }

  /** Only requests whose header {@code name} has {@code value} (the value's case ignored). */
  public PriorityClass withHeader(String name, String value) {
    Objects.requireNonNull(name, "header name");
    Objects.requireNonNull(value, "header value");
    Map<String, String> h = new LinkedHashMap<>(headers);
    h.put(name, value);
    return new PriorityClass(this.name, priority, methods, path, prefix, h);
  }

  public String name() {
    return name;
  }

  public int priority() {
    return priority;
  }

  public boolean critical() {
    return priority == CRITICAL;
  }

  /** Whether the request is in this class; {@code method} upper-case, {@code path} split. */
  boolean matches(String method, PathPattern.Segments path, RequestInfo request) {
    if (!Rule.covers(methods, method)) {
      return false;
    }
    if (pattern != null && pattern.match(path) == null) {
      return false;
    }
    for (Map.Entry<String, String> h : headers.entrySet()) {
      boolean found = false;
      for (String v : request.headers(h.getKey())) {
        if (v != null && v.trim().equalsIgnoreCase(h.getValue())) {
          found = true;
          break;
        }
      }
      if (!found) {
        return false;
      }
    }
    return true;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof PriorityClass p
        && p.name.equals(name)
        && p.priority == priority
        && p.methods.equals(methods)
        && Objects.equals(p.path, path)
        && p.prefix == prefix
        && p.headers.equals(headers);
  }

  @Override
  public int hashCode() {
    return Objects.hash(name, priority, methods, path, prefix, headers);
  }

  @Override
  public String toString() {
    return name
        + " (priority "
        + priority
        + (methods.isEmpty() ? "" : ", " + methods)
        + (path == null ? "" : ", " + path + (prefix ? "**" : ""))
        + (headers.isEmpty() ? "" : ", " + headers)
        + ")";
  }
}
