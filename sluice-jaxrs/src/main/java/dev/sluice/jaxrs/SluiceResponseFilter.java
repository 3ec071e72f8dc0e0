package dev.sluice.jaxrs;

import dev.sluice.http.Admission;
import dev.sluice.http.RequestLimiter;
import jakarta.ws.rs.HttpMethod;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerResponseContext;
import jakarta.ws.rs.container.ContainerResponseFilter;

/**
 * Adds the rate-limit headers to every limited response, not only to rejections. A request the
 * rules left for after matching that no resource method took (a 404, or one another filter
 * answered) is decided here, and a refusal replaces its response. A response without an entity
 * gives its concurrency slots back here, before it is written.
 */
final class SluiceResponseFilter implements ContainerResponseFilter {

  private final RequestLimiter limiter;

  SluiceResponseFilter(RequestLimiter limiter) {
    this.limiter = limiter;
  }

  @Override
  public void filter(ContainerRequestContext request, ContainerResponseContext response) {
    JaxrsRequest pending = Responses.pending(request);
    if (pending != null) {
      Responses.apply(request, response, Admission.decide(limiter, pending));
    }
    if (request.getProperty(Responses.DECISION) instanceof Responses.Applied applied) {
      Responses.addHeaders(applied, response.getHeaders());
    }
    if (!response.hasEntity() || HttpMethod.HEAD.equals(request.getMethod())) {
      SlotRelease.release(request.getProperty(SlotRelease.SLOTS));
    }
  }
}
