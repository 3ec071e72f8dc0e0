package dev.sluice.http;

import java.util.Locale;
import java.util.Map;

/**
 * Where a rule finds the identity it counts against: {@code user}, {@code ip}, {@code header:NAME},
 * {@code path:NAME} (a capture of the rule's pattern), {@code attribute:NAME}, or {@code app:NAME}
 * (a {@link KeyResolver} the application registered). Immutable.
 */
final class KeySource {

  enum Kind {
    USER,
    IP,
    HEADER,
    PATH,
    ATTRIBUTE,
    APP
  }

  final Kind kind;
  final String name;
  private final String spec;
  private final String prefix;

  private KeySource(Kind kind, String name, String spec) {
    this.kind = kind;
    this.name = name;
    this.spec = spec;
    this.prefix = tag() + '=';
  }

  /** {@link #tag()} and '=', what precedes the value in an identity: {@code ip=192.0.2.1}. */
  String prefix() {
    return prefix;
  }

  /**
   * Parses a key source.
   *
   * @throws IllegalArgumentException if it is not one
   */
  static KeySource parse(String spec) {
    if (spec == null) {
      throw new IllegalArgumentException("unknown key source: null");
    }
    String s = spec.trim();
    String lower = s.toLowerCase(Locale.ROOT);
    if (lower.equals("user")) {
      return new KeySource(Kind.USER, null, s);
    }
    if (lower.equals("ip")) {
      return new KeySource(Kind.IP, null, s);
    }
    int colon = s.indexOf(':');
    if (colon > 0 && colon < s.length() - 1) {
      String name = s.substring(colon + 1).trim();
      switch (lower.substring(0, colon)) {
        case "header" -> {
          // Header names are case-insensitive; adapters' maps (Jersey's, Tomcat's) lower-case the
          // name they are asked for, which costs nothing when it already is.
          return new KeySource(Kind.HEADER, name.toLowerCase(Locale.ROOT), s);
        }
        case "path" -> {
          return new KeySource(Kind.PATH, name, s);
        }
        case "attribute" -> {
          return new KeySource(Kind.ATTRIBUTE, name, s);
        }
        case "app" -> {
          return new KeySource(Kind.APP, name, s);
        }
        default -> {}
      }
    }
    throw new IllegalArgumentException(
        "unknown key source '"
            + spec
            + "' (use user, ip, header:NAME, path:NAME, attribute:NAME or app:NAME)");
  }

  /** The identity this source yields for the request, or null. */
  String resolve(
      RequestInfo request,
      Map<String, String> captures,
      ClientAddress clients,
      Map<String, KeyResolver> apps) {
    String v =
        switch (kind) {
          case USER -> request.principal().orElse(null);
          case IP -> clients.resolve(request);
          case HEADER -> {
            // RequestInfo.header trims; a RequestInfo of the application's own may not.
            String h = request.header(name).orElse(null);
            yield h == null ? null : h.trim();
          }
          case PATH -> captures == null ? null : captures.get(name);
          case APP -> {
            KeyResolver r = apps.get(name);
            yield r == null ? null : r.resolve(request).orElse(null);
          }
          default -> request.attribute(name).map(Object::toString).orElse(null);
        };
    return v == null || v.isEmpty() ? null : v;
  }

  /**
   * A prefix that keeps identities of different sources apart: {@code ip:1.2.3.4} vs {@code
   * user:…}.
   */
  String tag() {
    return kind == Kind.USER || kind == Kind.IP ? kind.name().toLowerCase(Locale.ROOT) : spec;
  }

  @Override
  public String toString() {
    return spec;
  }
}
