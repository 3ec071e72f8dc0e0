package dev.sluice.jaxrs;

import dev.sluice.http.Admission;
import dev.sluice.http.RequestLimiter;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.container.PreMatching;

/**
 * Enforces the rules before resource matching, so a rejected request costs as little as possible.
 * Registered at priority AUTHENTICATION + 50: after pre-matching authentication filters, so {@code
 * user} keys see their principal.
 *
 * <p>When resources carry {@link RateLimited}, a request is decided once, after matching: by the
 * rules and the annotations of the method it reaches together ({@link RateLimitedFeature.Filter}),
 * by the rules alone for a method without any ({@link PendingRulesFilter}), or when its response is
 * ready for a request no method took ({@link SluiceResponseFilter}). The method and path are read
 * here, as the client sent them.
 */
@PreMatching
final class SluiceRequestFilter implements ContainerRequestFilter {

  private final RequestLimiter limiter;
  private final ContainerAccess container;

  SluiceRequestFilter(RequestLimiter limiter, ContainerAccess container) {
    this.limiter = limiter;
    this.container = container;
  }

  @Override
  public void filter(ContainerRequestContext ctx) {
    if (limiter.hasBoundRules()) {
      ctx.setProperty(Responses.PENDING, JaxrsRequest.asSent(ctx, container));
      return;
    }
    Responses.apply(ctx, Admission.decide(limiter, new JaxrsRequest(ctx, container)));
  }
}
