package dev.sluice.jaxrs;

import dev.sluice.Outcome;
import dev.sluice.Slots;
import dev.sluice.http.RateLimitHeaders;
import dev.sluice.http.RequestLimiter;
import dev.sluice.http.RuleSet;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.core.MultivaluedMap;
import jakarta.ws.rs.core.Response;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Decisions into JAX-RS responses and headers. */
final class Responses {

  private static final Logger LOG = LoggerFactory.getLogger(Responses.class);

  /**
   * The request property that carries the decision from the request filter to the response filter.
   */
  static final String DECISION = "dev.sluice.decision";

  /** Each request thread's outcome, reused: the decision itself allocates nothing. */
  private static final ThreadLocal<Outcome> OUTCOMES = ThreadLocal.withInitial(Outcome::new);

  private Responses() {}

  /**
   * What a request's decisions leave for its response: whether the binding one allowed, how much it
   * left, and its headers, written once from the live outcome.
   */
  record Applied(boolean allowed, long remaining, List<Map.Entry<String, String>> headers) {}

  /**
   * Decides, and aborts the request with a 429 (or 503) when it is rejected. Never throws: the
   * limiter fails open on its own errors, and an error here lets the request through.
   */
  static void apply(RequestLimiter limiter, Consumer<Outcome> decide, ContainerRequestContext ctx) {
    try {
      Outcome out = OUTCOMES.get();
      decide.accept(out);
      // Before anything else: a request no rule limits may still hold a place in the worker
      // shedder's count of requests in flight.
      Slots slots = limiter.slots(out);
      if (slots.holds()) {
        SlotRelease.hold(ctx, slots);
      }
      if (!out.applied()) {
        return;
      }
      Applied earlier = (Applied) ctx.getProperty(DECISION);
      boolean binds = earlier == null || !out.allowed() || out.remaining() < earlier.remaining();
      if (!binds) {
        return;
      }
      RuleSet rules = limiter.rules();
      List<Map.Entry<String, String>> headers = new ArrayList<>(8);
      RateLimitHeaders.write(
          out,
          rules.headers(),
          rules.resetFormat(),
          limiter.clock().millis(),
          (name, value) -> headers.add(Map.entry(name, value)));
      ctx.setProperty(DECISION, new Applied(out.allowed(), out.remaining(), headers));
      if (!out.allowed()) {
        Response.ResponseBuilder r =
            Response.status(RateLimitHeaders.status(out))
                .type(RateLimitHeaders.PROBLEM_JSON)
                .entity(RateLimitHeaders.problem(out));
        for (Map.Entry<String, String> h : headers) {
          r.header(h.getKey(), h.getValue());
        }
        ctx.abortWith(r.build());
      }
    } catch (RuntimeException e) {
      LOG.error("rate limiting failed; the request goes on unlimited", e);
    }
  }

  /** Adds the decision's headers to a response that does not carry them yet. */
  static void addHeaders(Applied applied, MultivaluedMap<String, Object> headers) {
    try {
      for (Map.Entry<String, String> h : applied.headers()) {
        if (!headers.containsKey(h.getKey())) {
          headers.putSingle(h.getKey(), h.getValue());
        }
      }
    } catch (RuntimeException e) {
      LOG.error("rate limit headers failed; the response goes on without them", e);
    }
  }
}
