package dev.sluice.jaxrs;

import dev.sluice.http.Admission;
import dev.sluice.http.RequestLimiter;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;

/**
 * Decides the rules for a request that reached a resource method without {@link RateLimited}, when
 * the request filter left them for after matching (resources elsewhere carry annotations).
 * Registered at priority AUTHENTICATION + 70, after the annotations' filters (AUTHENTICATION + 60),
 * which decide the rules themselves.
 */
final class PendingRulesFilter implements ContainerRequestFilter {

  private final RequestLimiter limiter;

  PendingRulesFilter(RequestLimiter limiter) {
    this.limiter = limiter;
  }

  @Override
  public void filter(ContainerRequestContext ctx) {
    JaxrsRequest pending = Responses.pending(ctx);
    if (pending != null) {
      Responses.apply(ctx, Admission.decide(limiter, pending));
    }
  }
}
