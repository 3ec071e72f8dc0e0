package dev.sluice.jaxrs;

import dev.sluice.Decision;
import dev.sluice.http.RequestLimiter;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerResponseContext;
import jakarta.ws.rs.container.ContainerResponseFilter;

/** Adds the rate-limit headers to every limited response, not only to rejections. */
final class SluiceResponseFilter implements ContainerResponseFilter {

  private final RequestLimiter limiter;

  SluiceResponseFilter(RequestLimiter limiter) {
    this.limiter = limiter;
  }

  @Override
  public void filter(ContainerRequestContext request, ContainerResponseContext response) {
    Object d = request.getProperty(Responses.DECISION);
    if (d instanceof Decision decision) {
      Responses.addHeaders(limiter, decision, response.getHeaders());
    }
  }
}
