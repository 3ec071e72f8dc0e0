package dev.sluice.spring;

import dev.sluice.http.RequestLimiter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

/** {@code /actuator/sluice}: what the limiter enforces now, rules and knobs. */
@Endpoint(id = "sluice")
public class SluiceEndpoint {

  private final RequestLimiter limiter;

  SluiceEndpoint(RequestLimiter limiter) {
    this.limiter = limiter;
  }

  /** The rules and knobs in force: {@code enabled}, {@code rules}, {@code knobs}, ignored knobs. */
  @ReadOperation
  public Map<String, Object> inForce() {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("enabled", limiter.rules().enabled() && limiter.knobs().enabled());
    out.put(
        "rules", limiter.toString().lines().filter(l -> !l.startsWith("knobs over them")).toList());
    out.put("knobs", limiter.knobs().targets());
    List<String> problems = limiter.knobProblems();
    out.put("ignoredKnobs", problems);
    return out;
  }
}
