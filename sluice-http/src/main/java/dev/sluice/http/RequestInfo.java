package dev.sluice.http;

import java.util.List;
import java.util.Optional;

/**
 * What the rules see of an HTTP request. Adapters implement it over their request type and should
 * answer lazily: most rules read one or two of these.
 */
public interface RequestInfo {

  /** The HTTP method, e.g. {@code GET}. */
  String method();

  /**
   * The request path as received, still percent-encoded, without the query, e.g. {@code
   * /v1/organizations/42/product/7}: the rules split it on {@code /} and decode each segment on its
   * own, as the container routes it.
   */
  String path();

  /**
   * Whether the application routes on the path's segments as they are, so that a dot segment
   * ({@code .} or {@code ..}, raw or encoded) is data, as JAX-RS (Jersey) routes: {@code /lead/..}
   * reaches {@code /lead/{id}}. False by default, for a servlet container, which removes dot
   * segments before it maps a servlet: a path with dot segments is then counted under both
   * readings, since the adapter cannot know which one the application behind it uses.
   */
  default boolean dotSegmentsAreData() {
    return false;
  }

  /** Every value of a header (case-insensitive name), in the order received; empty if absent. */
  List<String> headers(String name);

  /**
   * The first value of a header, without the characters up to U+0020 around it (spaces, tabs,
   * control characters: as {@link String#trim}, and as HTTP leaves whitespace around a field value
   * out of it); empty if absent. A {@code header:} key and an application's {@link KeyResolver}
   * read one value however a client pads it.
   */
  default Optional<String> header(String name) {
    List<String> values = headers(name);
    return values.isEmpty() || values.get(0) == null
        ? Optional.empty()
        : Optional.of(values.get(0).trim());
  }

  /**
   * The address of the peer that connected (the last proxy, if any), e.g. {@code 10.0.0.7}; empty
   * when the container does not say.
   */
  Optional<String> remoteAddress();

  /** The authenticated user's name; empty when nobody is authenticated. */
  Optional<String> principal();

  /** A request attribute or property that another filter set; empty when none is. */
  Optional<Object> attribute(String name);
}
