package dev.sluice;

import dev.sluice.engine.Answer;
import java.util.List;
import java.util.Optional;

/**
 * The answer to one request, written into an object the caller owns and reuses: the allocation-free
 * form of {@link Decision}. A decision into a reused outcome allocates nothing on the allow path.
 *
 * <pre>{@code
 * Outcome out = new Outcome();           // one per thread, reused
 * if (!limiter.tryAcquire(key, 1, out)) {
 *   reject(out.retryAfterMillis());
 * }
 * }</pre>
 *
 * <p>The <em>binding</em> quota is the one that decided, as for {@link Decision}. Not thread-safe:
 * one thread at a time, and each decision overwrites the last. {@link #toDecision} takes an
 * immutable copy.
 */
public final class Outcome {

  /** The engine's answer this outcome reads. */
  final Answer answer;

  /** An empty outcome, ready for a limiter to write into. */
  public Outcome() {
    this(new Answer());
  }

  /** An outcome that reads {@code answer}. */
  Outcome(Answer answer) {
    this.answer = answer;
  }

  /**
   * Whether any limit applied. False when a request limiter found no rule for the request (no
   * match, no identity, or the kill switch is on); the request is then allowed and nothing else is
   * set.
   */
  public boolean applied() {
    return answer.applied();
  }

  /** {@return whether the request may proceed} */
  public boolean allowed() {
    return answer.allowed();
  }

  /** {@return the id of the binding policy} */
  public String policy() {
    return answer.policy();
  }

  /**
   * The binding tier.
   *
   * @throws IllegalStateException if no limit applied
   */
  public Tier tier() {
    return answer.tier();
  }

  /**
   * The binding policy's algorithm: {@link Algorithm#CONCURRENCY} when the limit is on requests in
   * flight rather than on a rate.
   *
   * @throws IllegalStateException if no limit applied
   */
  public Algorithm algorithm() {
    return answer.algorithm();
  }

  /**
   * The binding tier's capacity ({@link Tier#burst}): its limit, or a token bucket's size; 0 when
   * no limit applied.
   */
  public long limit() {
    return answer.limit();
  }

  /** {@return permits counted against the binding tier} */
  public long used() {
    return answer.used();
  }

  /** {@return permits left in the binding tier, never negative} */
  public long remaining() {
    return answer.remaining();
  }

  /**
   * Milliseconds until the binding tier is back to zero if nothing else arrives. For a concurrency
   * limit, the latest a slot never given back drops out of the count: slots in flight free when
   * their requests complete, which no clock predicts, so the headers never show it.
   */
  public long resetAfterMillis() {
    return answer.resetAfterMillis();
  }

  /** Milliseconds the client should wait; 0 when allowed (see {@link Decision#retryAfter}). */
  public long retryAfterMillis() {
    return answer.retryAfterMillis();
  }

  /**
   * Whether a load shedder decided: refused, the request gets a 503 ({@code
   * temporary-reduced-capacity}), not a 429, and the outcome says nothing of a client's quota.
   */
  public boolean shed() {
    return answer.shed();
  }

  /**
   * The request's priority class for load shedding ({@code critical}, {@code test}…), or empty when
   * the limiter sheds no load.
   */
  public String priorityClass() {
    return answer.priorityClass();
  }

  /** {@return whether the binding policy only reports (never rejects)} */
  public boolean bindingShadow() {
    return answer.bindingShadow();
  }

  /** {@return whether the store answered, and if not, which way the decision fell} */
  public StoreStatus storeStatus() {
    return answer.storeStatus();
  }

  /**
   * Whether the store failed or timed out for this decision (also when local counters decided it,
   * {@link StoreStatus#LOCAL}).
   */
  public boolean storeFailed() {
    return answer.storeFailed();
  }

  /**
   * {@return whether a shadow policy would have rejected this request (it was not rejected for it)}
   */
  public boolean shadowRejected() {
    return answer.shadowRejected();
  }

  /** {@return whether the local deny cache answered, with no store call} */
  public boolean fromDenyCache() {
    return answer.fromDenyCache();
  }

  /**
   * Every tier of every policy that applied, in order, as for {@link Decision#quotas}: the same
   * tiers whether the store or the deny cache answered. Allocates a new list on each call.
   */
  public List<Quota> quotas() {
    return answer.quotas();
  }

  /**
   * The IETF {@code RateLimit-Policy} field for the quotas that applied, shadow ones, the fleet's
   * load shedder and concurrency limits (requests in flight, no quota per window) left out, or
   * empty when there are none. Kept while the same policies apply, so a filter that reuses its
   * outcome builds it once.
   */
  public String ietfPolicy() {
    return answer.ietfPolicy();
  }

  /**
   * The IETF {@code RateLimit} field: each quota of {@link #ietfPolicy}, its remaining permits and
   * seconds until its count is back to zero; empty when there are none.
   */
  public String ietfState() {
    return answer.ietfState();
  }

  /** {@return an immutable {@link Decision}, or empty when no limit applied} */
  public Optional<Decision> toDecision() {
    return answer.applied() ? Optional.of(new Decision(answer.copy())) : Optional.empty();
  }

  @Override
  public String toString() {
    return answer.toString();
  }
}
