package dev.sluice.bench;

import dev.sluice.http.RequestInfo;
import java.util.List;
import java.util.Optional;

/**
 * A {@code GET} with an API key, as an adapter presents it: every value already a string the
 * container holds, nothing allocated per call.
 */
final class BenchRequest implements RequestInfo {

  private static final List<String> KEY = List.of("key-1");
  private static final Optional<String> ADDRESS = Optional.of("192.0.2.7");

  private final String path;

  BenchRequest(String path) {
    this.path = path;
  }

  @Override
  public String method() {
    return "GET";
  }

  @Override
  public String path() {
    return path;
  }

  @Override
  public List<String> headers(String name) {
    return name.equalsIgnoreCase("X-Api-Key") ? KEY : List.of();
  }

  @Override
  public Optional<String> remoteAddress() {
    return ADDRESS;
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
