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

  /** The decoded request path, without the query, e.g. {@code /v1/organizations/42/product/7}. */
  String path();

  /** Every value of a header (case-insensitive name), in the order received; empty if absent. */
  List<String> headers(String name);

  /** The first value of a header; empty if absent. */
  default Optional<String> header(String name) {
    List<String> values = headers(name);
    return values.isEmpty() ? Optional.empty() : Optional.ofNullable(values.get(0));
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
