package dev.sluice.http;

import dev.sluice.Outcome;
import dev.sluice.Slots;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One request's decision, as an adapter acts on it, in the order it acts: {@link #decide} (the
 * slots the request holds are taken at once), {@link #writeHeaders} to the response's header
 * setter, then {@link #refused} with its {@link #status} and {@link #problem} body, or proceed and
 * give {@link #slots} back when the response is complete. Never throws: the limiter fails open on
 * its own errors, and an error in any step here is logged and lets the request through unlimited.
 *
 * <p>The blocking {@link #decide} returns the calling thread's own admission, reused by its next
 * decision so that deciding allocates nothing: read it before the thread decides again. {@link
 * #decideAsync} returns a new one. Not thread-safe.
 */
public final class Admission {

  private static final Logger LOG = LoggerFactory.getLogger(Admission.class);

  /** Each request thread's admission, reused: the decision itself allocates nothing. */
  private static final ThreadLocal<Admission> REUSED = ThreadLocal.withInitial(Admission::new);

  private final Outcome out = new Outcome();
  private RequestLimiter limiter;
  private Slots slots = Slots.NONE;
  private boolean failed;
  private int status;
  private String problem;

  private Admission() {}

  /** Decides {@code request} by the limiter's rules; see the class comment for its reuse. */
  public static Admission decide(RequestLimiter limiter, RequestInfo request) {
    Admission a = reused(limiter);
    try {
      limiter.decide(request, a.out);
    } catch (RuntimeException e) {
      return a.failedOpen(e);
    }
    return a.holding();
  }

  /**
   * Decides a request the adapter routed to {@code rules} (a JAX-RS resource method's
   * {@code @RateLimited}), {@code pathParameters} feeding their {@code path:NAME} keys; reused as
   * {@link #decide(RequestLimiter, RequestInfo)}.
   */
  public static Admission decide(
      RequestLimiter limiter,
      RequestLimiter.BoundRules rules,
      RequestInfo request,
      Map<String, String> pathParameters) {
    Admission a = reused(limiter);
    try {
      rules.decide(request, pathParameters, a.out);
    } catch (RuntimeException e) {
      return a.failedOpen(e);
    }
    return a.holding();
  }

  /**
   * Decides a request the adapter routed to {@code rules} together with the limiter's rules that
   * match it ({@link RequestLimiter.BoundRules#decideWithRules}): one decision, so a refusal by any
   * rule takes nothing from the others. Reused as {@link #decide(RequestLimiter, RequestInfo)}.
   */
  public static Admission decideWithRules(
      RequestLimiter limiter,
      RequestLimiter.BoundRules rules,
      RequestInfo request,
      Map<String, String> pathParameters) {
    Admission a = reused(limiter);
    try {
      rules.decideWithRules(request, pathParameters, a.out);
    } catch (RuntimeException e) {
      return a.failedOpen(e);
    }
    return a.holding();
  }

  /**
   * Decides {@code request} without waiting on the store ({@link RequestLimiter#decideAsync}), for
   * an adapter whose thread must not block (an event loop).
   *
   * @return completes with a new admission, never exceptionally: at once when the store answers
   *     from memory, else in the thread it answered on
   */
  public static CompletionStage<Admission> decideAsync(
      RequestLimiter limiter, RequestInfo request) {
    Admission a = new Admission();
    a.limiter = limiter;
    CompletionStage<Boolean> decided;
    try {
      decided = limiter.decideAsync(request, a.out);
    } catch (RuntimeException e) {
      return CompletableFuture.completedFuture(a.failedOpen(e));
    }
    return decided.handle((allowed, e) -> e != null ? a.failedOpen(e) : a.holding());
  }

  private static Admission reused(RequestLimiter limiter) {
    Admission a = REUSED.get();
    a.limiter = limiter;
    a.slots = Slots.NONE;
    a.failed = false;
    a.problem = null;
    return a;
  }

  /**
   * Takes the slots before anything else: a request no rule limits may still hold a place in the
   * worker shedder's count of requests in flight.
   */
  private Admission holding() {
    try {
      slots = limiter.slots(out);
    } catch (RuntimeException e) {
      return failedOpen(e);
    }
    return this;
  }

  /**
   * {@return the concurrency slots the request holds, to {@link Slots#release} when its response is
   * complete however it completes; {@link Slots#NONE} when it holds none}
   */
  public Slots slots() {
    return slots;
  }

  /** {@return whether a limit applied: the response has rate-limit headers to carry} */
  public boolean limited() {
    return !failed && out.applied();
  }

  /** {@return whether the request may go on} */
  public boolean allowed() {
    return !refused();
  }

  /** {@return what the binding quota has left} */
  public long remaining() {
    return out.remaining();
  }

  /** {@return how long a refused client should wait before a retry can pass} */
  public long retryAfterMillis() {
    return out.retryAfterMillis();
  }

  /**
   * Writes the rate-limit headers to {@code header} (a response's setter), in order; nothing when
   * no limit applied. An error here lets the request through.
   */
  public void writeHeaders(BiConsumer<String, String> header) {
    if (!limited()) {
      return;
    }
    try {
      RuleSet rules = limiter.rules();
      RateLimitHeaders.ResetFormat reset = rules.resetFormat();
      // Only an epoch reset names an instant: a delta needs no clock read.
      long now = reset == RateLimitHeaders.ResetFormat.EPOCH_SECONDS ? limiter.clock().millis() : 0;
      RateLimitHeaders.write(out, rules.headers(), reset, now, header);
    } catch (RuntimeException e) {
      failedOpen(e);
    }
  }

  /** {@return whether the request is refused: answer it at once with {@link #status} and body} */
  public boolean refused() {
    if (!limited() || out.allowed()) {
      return false;
    }
    if (problem == null) {
      try {
        status = RateLimitHeaders.status(out);
        problem = RateLimitHeaders.problem(out);
      } catch (RuntimeException e) {
        failedOpen(e);
        return false;
      }
    }
    return true;
  }

  /** {@return a refusal's status: 429, or 503 for load shedding or a store that fails closed} */
  public int status() {
    return refused() ? status : 200;
  }

  /**
   * {@return a refusal's RFC 9457 problem document, of type {@link RateLimitHeaders#PROBLEM_JSON}}
   */
  public String problem() {
    return refused() ? problem : "";
  }

  /**
   * The limiter fails open on its own errors; this is the last guard, never the client's problem.
   */
  private Admission failedOpen(Throwable e) {
    LOG.error("rate limiting failed; the request goes on unlimited", e);
    failed = true;
    return this;
  }
}
