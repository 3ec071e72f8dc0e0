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
    Responses.apply(ctx, Admission.decide(limiter, new JaxrsRequest(ctx, container)));
  }
}
