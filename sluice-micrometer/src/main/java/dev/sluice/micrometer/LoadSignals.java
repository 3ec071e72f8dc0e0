package dev.sluice.micrometer;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.DoubleSupplier;

/**
 * Load signals for a governor ({@code dev.sluice.control.Governor}): a Micrometer gauge, or a
 * Prometheus query (which needs {@code com.fasterxml.jackson.core:jackson-core} on the class path,
 * an optional dependency of this module). Each read that cannot give one number throws, and the
 * governor then leaves the rate where it is.
 */
public final class LoadSignals {

  private LoadSignals() {}

  /**
   * The value of the gauge {@code name} with {@code tags} (key, value, …) in {@code registry}, read
   * afresh each time, so a gauge registered later is found.
   */
  public static DoubleSupplier gauge(MeterRegistry registry, String name, String... tags) {
    Objects.requireNonNull(registry, "registry");
    Objects.requireNonNull(name, "name");
    return () -> {
      Gauge g = registry.find(name).tags(tags).gauge();
      if (g == null) {
        throw new IllegalStateException("no gauge '" + name + "' " + List.of(tags));
      }
      return g.value();
    };
  }

  /**
   * The value of {@code query} (PromQL) at the Prometheus server {@code server} (its base address,
   * e.g. {@code http://prometheus:9090}), through the instant-query API. The query must give
   * exactly one series: aggregate (with {@code max(…)}, say) where several instances report.
   * Prometheus's figures are as old as its last scrape; the governor's ramp is what tolerates that.
   */
  public static DoubleSupplier prometheus(URI server, String query, Duration timeout) {
    Objects.requireNonNull(query, "query");
    HttpClient client = HttpClient.newBuilder().connectTimeout(timeout).build();
    URI uri =
        server.resolve("/api/v1/query?query=" + URLEncoder.encode(query, StandardCharsets.UTF_8));
    HttpRequest request = HttpRequest.newBuilder(uri).timeout(timeout).GET().build();
    return () -> {
      HttpResponse<byte[]> r;
      try {
        r = client.send(request, HttpResponse.BodyHandlers.ofByteArray());
      } catch (IOException e) {
        throw new IllegalStateException("prometheus at " + server + ": " + e, e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while asking prometheus", e);
      }
      if (r.statusCode() != 200) {
        throw new IllegalStateException(
            "prometheus answered " + r.statusCode() + " to " + query + ": " + snippet(r.body()));
      }
      List<String> values = values(r.body());
      if (values.size() != 1) {
        throw new IllegalStateException(
            "'" + query + "' gave " + values.size() + " series; a load signal needs exactly one");
      }
      return Double.parseDouble(values.get(0));
    };
  }

  /** The sample values of an instant-query answer: {@code data.result[*].value[1]}. */
  static List<String> values(byte[] json) {
    return PrometheusAnswer.values(json);
  }

  /**
   * Reads Prometheus's JSON with jackson-core, an optional dependency: only a Prometheus signal
   * loads this class, so a Micrometer gauge needs no JSON library.
   */
  private static final class PrometheusAnswer {
    private static final JsonFactory JSON = new JsonFactory();

    static List<String> values(byte[] json) {
      List<String> out = new ArrayList<>();
      try (JsonParser p = JSON.createParser(json)) {
        int depth = 0;
        boolean inValue = false;
        int index = 0;
        for (JsonToken t = p.nextToken(); t != null; t = p.nextToken()) {
          switch (t) {
            case START_OBJECT, START_ARRAY -> {
              depth++;
              if (t == JsonToken.START_ARRAY && "value".equals(p.currentName())) {
                inValue = true;
                index = 0;
              }
            }
            case END_OBJECT, END_ARRAY -> {
              depth--;
              if (t == JsonToken.END_ARRAY) {
                inValue = false;
              }
            }
            case VALUE_STRING, VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> {
              if (inValue && index++ == 1) {
                out.add(p.getText());
              }
            }
            default -> {}
          }
        }
        if (depth != 0) {
          throw new IllegalStateException("prometheus's answer was cut short");
        }
      } catch (IOException e) {
        throw new IllegalStateException("prometheus's answer is not JSON: " + snippet(json), e);
      }
      return out;
    }
  }

  private static String snippet(byte[] body) {
    String s = new String(body, StandardCharsets.UTF_8).strip();
    return s.length() > 200 ? s.substring(0, 200) + "…" : s;
  }
}
