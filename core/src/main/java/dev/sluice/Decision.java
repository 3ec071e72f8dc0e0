package dev.sluice;

import java.time.Duration;
import java.util.List;

/**
 * The answer to one request: allowed or not, and the figures a client is told.
 *
 * <p>The <em>binding</em> quota is the one that decided: on a rejection, the violated tier that
 * frees last; otherwise the tier with the fewest permits remaining. {@link #limit()}, {@link
 * #used()}, {@link #remaining()} and {@link #resetAfter()} report it. Immutable.
 */
public final class Decision {

  private final boolean allowed;
  private final Quota binding;
  private final List<Quota> quotas;
  private final Duration retryAfter;
  private final StoreStatus storeStatus;
  private final boolean shadowRejected;
  private final boolean cached;

  Decision(
      boolean allowed,
      Quota binding,
      List<Quota> quotas,
      Duration retryAfter,
      StoreStatus storeStatus,
      boolean shadowRejected,
      boolean cached) {
    this.allowed = allowed;
    this.binding = binding;
    this.quotas = quotas;
    this.retryAfter = retryAfter;
    this.storeStatus = storeStatus;
    this.shadowRejected = shadowRejected;
    this.cached = cached;
  }

  /** Whether the request may proceed. */
  public boolean allowed() {
    return allowed;
  }

  /** The quota that decided (see the class comment). */
  public Quota binding() {
    return binding;
  }

  /** The id of the binding policy. */
  public String policy() {
    return binding.policy();
  }

  /** The binding tier. */
  public Tier tier() {
    return binding.tier();
  }

  /** The binding tier's limit. */
  public long limit() {
    return binding.limit();
  }

  /** Permits counted against the binding tier. */
  public long used() {
    return binding.used();
  }

  /** Permits left in the binding tier, never negative. */
  public long remaining() {
    return binding.remaining();
  }

  /** How long until the binding tier is back to zero if nothing else arrives. */
  public Duration resetAfter() {
    return binding.resetAfter();
  }

  /**
   * How long the client should wait before the same request can pass: the earliest instant at which
   * every violated tier lets it through, assuming no other traffic. {@link Duration#ZERO} when
   * allowed. For a request larger than a tier's limit, which can never pass, the tier's period.
   */
  public Duration retryAfter() {
    return retryAfter;
  }

  /**
   * Every tier of every policy that applied, in order. Empty when the store failed, since the usage
   * is then unknown; also empty when the local deny cache answered, apart from the binding.
   */
  public List<Quota> quotas() {
    return quotas;
  }

  /** Whether the store answered, and if not, which way the decision fell. */
  public StoreStatus storeStatus() {
    return storeStatus;
  }

  /** Whether the store failed or timed out for this decision. */
  public boolean storeFailed() {
    return storeStatus != StoreStatus.OK;
  }

  /** Whether a shadow policy would have rejected this request (it was not rejected for it). */
  public boolean shadowRejected() {
    return shadowRejected;
  }

  /** Whether the local deny cache answered, with no store call. */
  public boolean fromDenyCache() {
    return cached;
  }

  @Override
  public String toString() {
    return (allowed ? "allowed" : "rejected")
        + "{policy="
        + binding.policy()
        + ", limit="
        + limit()
        + ", used="
        + used()
        + ", remaining="
        + remaining()
        + ", resetAfter="
        + resetAfter()
        + ", retryAfter="
        + retryAfter
        + ", store="
        + storeStatus
        + (shadowRejected ? ", shadowRejected" : "")
        + (cached ? ", cached" : "")
        + "}";
  }
}
