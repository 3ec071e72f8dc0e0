package dev.sluice.jaxrs;

import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerResponseContext;
import jakarta.ws.rs.container.ContainerResponseFilter;

/** Adds the rate-limit headers to every limited response, not only to rejections. */
final class SluiceResponseFilter implements ContainerResponseFilter {

  @Override
  public void filter(ContainerRequestContext request, ContainerResponseContext response) {
    if (request.getProperty(Responses.DECISION) instanceof Responses.Applied applied) {
      Responses.addHeaders(applied, response.getHeaders());
    }
  }
}
