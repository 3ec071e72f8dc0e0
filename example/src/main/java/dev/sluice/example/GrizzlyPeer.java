package dev.sluice.example;

import dev.sluice.jaxrs.SluiceFeature;
import jakarta.inject.Inject;
import jakarta.inject.Provider;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.container.PreMatching;
import org.glassfish.grizzly.http.server.Request;

/** Tells Sluice the peer's address, which Jersey on Grizzly keeps in Grizzly's own request. */
@PreMatching
public class GrizzlyPeer implements ContainerRequestFilter {

  @Inject
  private Provider<Request> request;

  @Override
  public void filter(ContainerRequestContext ctx) {
    ctx.setProperty(SluiceFeature.REMOTE_ADDRESS_PROPERTY, request.get().getRemoteAddr());
  }
}
