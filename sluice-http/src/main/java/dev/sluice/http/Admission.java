package dev.sluice.http;

import dev.sluice.Outcome;
import dev.sluice.Slots;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What every adapter does with a request, written once: decide, hold the slots the request takes,
 * write the rate-limit headers, refuse with a 429 or a 503. An adapter supplies an {@link Exchange}
 * (how its container decides and where the response goes); the JAX-RS feature and the servlet
 * filter both call {@link #admit}. Thread-safe.
 */
public final class Admission {

  private static final Logger LOG = LoggerFactory.getLogger(Admission.class);

  /** Each request thread's outcome, reused: the decision itself allocates nothing. */
  private static final ThreadLocal<Outcome> OUTCOMES = ThreadLocal.withInitial(Outcome::new);

  private Admission() {}

  /** One request and its response, as an adapter sees them; a header is {@link #accept}ed. */
  public interface Exchange extends BiConsumer<String, String> {

    /** Decides this request into {@code out}: the limiter's rules, or rules bound to a method. */
    void decide(Outcome out);

    /**
     * Whether this decision's headers are the ones to send. A request decided twice (JAX-RS: the
     * rules, then a resource's {@code @RateLimited}) keeps the headers of the tighter; a refusal
     * always takes them. True by default.
     */
    default boolean takes(Outcome out) {
      return true;
    }

    /** Keeps the slots the request holds, to give back when its response is complete. */
    void hold(Slots slots);

    /**
     * Answers the request at once, after the headers: {@code status} 429 or 503 with a problem+json
     * {@code body}.
     */
    void refuse(int status, String contentType, String body) throws IOException;
  }

  /**
   * Decides one request and writes the decision to its response.
   *
   * @return whether the request goes on; false when it was refused (the response is written)
   * @throws IOException only from writing a refusal
   */
  public static boolean admit(RequestLimiter limiter, Exchange exchange) throws IOException {
    Outcome out = OUTCOMES.get();
    try {
      exchange.decide(out);
    } catch (RuntimeException e) {
      return failedOpen(e);
    }
    return conclude(limiter, exchange, out);
  }

  /**
   * {@link #admit} for an adapter whose thread must not block (an event loop): decides {@code
   * request} by the limiter's rules without waiting on the store ({@link
   * RequestLimiter#decideAsync}), then holds the slots, writes the headers and refuses exactly as
   * {@link #admit} does. {@link Exchange#decide} is not called. {@link Exchange#refuse} must not
   * block either: it sets the status and keeps the body for the adapter to write.
   *
   * @return completes with whether the request goes on, never exceptionally: at once when the store
   *     answers from memory, else in the thread it answered on
   */
  public static CompletionStage<Boolean> admitAsync(
      RequestLimiter limiter, RequestInfo request, Exchange exchange) {
    Outcome out = new Outcome();
    CompletionStage<Boolean> decided;
    try {
      decided = limiter.decideAsync(request, out);
    } catch (RuntimeException e) {
      return CompletableFuture.completedFuture(failedOpen(e));
    }
    return decided.handle(
        (allowed, e) -> {
          if (e != null) {
            return failedOpen(e);
          }
          try {
            return conclude(limiter, exchange, out);
          } catch (IOException io) {
            throw new UncheckedIOException(io);
          }
        });
  }

  /** After the decision in {@code out}: slots, headers, and the refusal when it refused. */
  private static boolean conclude(RequestLimiter limiter, Exchange exchange, Outcome out)
      throws IOException {
    int status;
    String body;
    try {
      // Before anything else: a request no rule limits may still hold a place in the worker
      // shedder's count of requests in flight.
      Slots slots = limiter.slots(out);
      if (slots.holds()) {
        exchange.hold(slots);
      }
      if (!out.applied() || !exchange.takes(out)) {
        return true;
      }
      RuleSet rules = limiter.rules();
      RateLimitHeaders.write(
          out, rules.headers(), rules.resetFormat(), limiter.clock().millis(), exchange);
      if (out.allowed()) {
        return true;
      }
      status = RateLimitHeaders.status(out);
      body = RateLimitHeaders.problem(out);
    } catch (RuntimeException e) {
      return failedOpen(e);
    }
    exchange.refuse(status, RateLimitHeaders.PROBLEM_JSON, body);
    return false;
  }

  /**
   * The limiter fails open on its own errors; this is the last guard, never the client's problem.
   */
  private static boolean failedOpen(Throwable e) {
    LOG.error("rate limiting failed; the request goes on unlimited", e);
    return true;
  }
}
