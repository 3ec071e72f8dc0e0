package dev.sluice.http;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/** A request for tests, built fluently. */
public final class TestRequest implements RequestInfo {
  private final String method;
  private final String path;
  private final Map<String, List<String>> headers = new HashMap<>();
  private final Map<String, Object> attributes = new HashMap<>();
  private String remote = "192.0.2.1";
  private String principal;
  private boolean dotSegmentsAreData;

  public TestRequest(String method, String path) {
    this.method = method;
    this.path = path;
  }

  public static TestRequest get(String path) {
    return new TestRequest("GET", path);
  }

  public TestRequest header(String name, String value) {
    headers.computeIfAbsent(name.toLowerCase(Locale.ROOT), k -> new ArrayList<>()).add(value);
    return this;
  }

  public TestRequest from(String address) {
    this.remote = address;
    return this;
  }

  public TestRequest user(String name) {
    this.principal = name;
    return this;
  }

  /** Routed as JAX-RS routes, on the raw segments; see {@link RequestInfo#dotSegmentsAreData}. */
  public TestRequest routedOnRawSegments() {
    this.dotSegmentsAreData = true;
    return this;
  }

  @Override
  public boolean dotSegmentsAreData() {
    return dotSegmentsAreData;
  }

  public TestRequest attribute(String name, Object value) {
    attributes.put(name, value);
    return this;
  }

  @Override
  public String method() {
    return method;
  }

  @Override
  public String path() {
    return path;
  }

  @Override
  public List<String> headers(String name) {
    return headers.getOrDefault(name.toLowerCase(Locale.ROOT), List.of());
  }

  @Override
  public Optional<String> remoteAddress() {
    return Optional.ofNullable(remote);
  }

  @Override
  public Optional<String> principal() {
    return Optional.ofNullable(principal);
  }

  @Override
  public Optional<Object> attribute(String name) {
    return Optional.ofNullable(attributes.get(name));
  }
}
