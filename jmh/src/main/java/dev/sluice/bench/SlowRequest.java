package dev.sluice.bench;

import dev.sluice.http.RequestInfo;
import java.util.List;
import java.util.Optional;

/** {@code GET /api/v1/slow} with an API key: the benchmarks' request to a limited endpoint. */
final class SlowRequest implements RequestInfo {
  private static final List<String> KEY = List.of("key-1");

  @Override
  public String method() {
    return "GET";
  }

  @Override
  public String path() {
    return "/api/v1/slow";
  }

  @Override
  public List<String> headers(String name) {
    return name.equalsIgnoreCase("X-Api-Key") ? KEY : List.of();
  }

  @Override
  public Optional<String> remoteAddress() {
    return Optional.of("192.0.2.7");
  }

  @Override
  public Optional<String> principal() {
    return Optional.empty();
  }

  @Override
  public Optional<Object> attribute(String name) {
    return Optional.empty();
  }
}
