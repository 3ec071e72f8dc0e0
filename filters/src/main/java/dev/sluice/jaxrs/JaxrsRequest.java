package dev.sluice.jaxrs;

import dev.sluice.RequestInfo;
import jakarta.ws.rs.container.ContainerRequestContext;
import java.security.Principal;
import java.util.List;
import java.util.function.Function;

/** A JAX-RS request as the rules see it; reads lazily. */
final class JaxrsRequest implements RequestInfo {

  private final ContainerRequestContext ctx;
  private final Function<ContainerRequestContext, String> remoteAddress;

  JaxrsRequest(ContainerRequestContext ctx, Function<ContainerRequestContext, String> remoteAddress) {
    this.ctx = ctx;
    this.remoteAddress = remoteAddress;
  }

  @Override
  public String method() {
    return ctx.getMethod();
  }

  @Override
  public String path() {
    // Relative to the application, still encoded: the rules normalize and decode it.
    String p = ctx.getUriInfo().getPath(false);
    return p.startsWith("/") ? p : "/" + p;
  }

  @Override
  public List<String> headers(String name) {
    List<String> v = ctx.getHeaders().get(name);
    return v == null ? List.of() : v;
  }

  @Override
  public String remoteAddress() {
    return remoteAddress.apply(ctx);
  }

  @Override
  public String principal() {
    Principal p = ctx.getSecurityContext() == null ? null : ctx.getSecurityContext().getUserPrincipal();
    return p == null ? null : p.getName();
  }

  @Override
  public Object attribute(String name) {
    return ctx.getProperty(name);
  }
}
