package dev.sluice;

import dev.sluice.engine.Answer;
import java.time.Duration;
import java.util.Collections;
import java.util.List;

/**
 * The answer to one request: allowed or not, and the figures a client is told.
 *
 * <p>The <em>binding</em> quota is the one that decided: on a rejection, the violated tier that
 * frees last; otherwise the tier with the fewest permits remaining. {@link #limit()}, {@link
 * #used()}, {@link #remaining()} and {@link #resetAfter()} report it. Immutable.
 */
public final class Decision {

  private final Answer outcome;
  private final Quota binding;

  /**
   * Wraps an answer where a limit applied, which nothing else holds or writes to any more: a copy
   * ({@link Answer#copy}) of a reused one, or the answer of an outcome made for this decision
   * alone.
   */
  Decision(Answer outcome) {
    this.outcome = outcome;
    this.binding = outcome.binding();
  }

  /**
   * This decision as an outcome, for what reads one ({@code RateLimitHeaders}): a copy of its own
   * each time, so writing another decision into it leaves this one unchanged.
   *
   * @return a new copy of the outcome
   */
  public Outcome outcome() {
    return new Outcome(outcome.copy());
  }

  /** {@return whether the request may proceed} */
  public boolean allowed() {
    return outcome.allowed();
  }

  /** {@return the quota that decided (see the class comment)} */
  public Quota binding() {
    return binding;
  }

  /** {@return the id of the binding policy} */
  public String policy() {
    return binding.policy();
  }

  /** {@return the binding tier} */
  public Tier tier() {
    return binding.tier();
  }

  /** {@return the binding tier's limit} */
  public long limit() {
    return binding.limit();
  }

  /** {@return permits counted against the binding tier} */
  public long used() {
    return binding.used();
  }

  /** {@return permits left in the binding tier, never negative} */
  public long remaining() {
    return binding.remaining();
  }

  /** {@return how long until the binding tier is back to zero if nothing else arrives} */
  public Duration resetAfter() {
    return binding.resetAfter();
  }

  /**
   * How long the client should wait before the same request can pass: the earliest instant at which
   * every violated tier lets it through, assuming no other traffic. {@link Duration#ZERO} when
   * allowed. For a request larger than a tier's limit, which can never pass, the tier's period.
   *
   * @return the wait, as {@code Retry-After} gives it
   */
  public Duration retryAfter() {
    return Duration.ofMillis(outcome.retryAfterMillis());
  }

  /**
   * Every tier of every policy that applied, in order, with what each stands at once a refused
   * request is refunded. The same tiers when the local deny cache answered, each reckoned from what
   * the store last said of it (an identity's counts as this instance last saw them; requests in
   * flight as the store counted them then). Empty when the store failed, since the usage is then
   * unknown, and only the binding for a request too large to ever pass.
   *
   * @return the quotas, unmodifiable
   */
  public List<Quota> quotas() {
    return Collections.unmodifiableList(outcome.quotas());
  }

  /** {@return whether the store answered, and if not, which way the decision fell} */
  public StoreStatus storeStatus() {
    return outcome.storeStatus();
  }

  /** {@return whether the store failed or timed out for this decision} */
  public boolean storeFailed() {
    return outcome.storeFailed();
  }

  /**
   * {@return whether a shadow policy would have rejected this request (it was not rejected for it)}
   */
  public boolean shadowRejected() {
    return outcome.shadowRejected();
  }

  /** {@return whether the local deny cache answered, with no store call} */
  public boolean fromDenyCache() {
    return outcome.fromDenyCache();
  }

  @Override
  public String toString() {
    return outcome.toString();
  }
}
