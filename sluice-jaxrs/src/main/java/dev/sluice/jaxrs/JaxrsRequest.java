package dev.sluice.jaxrs;

import dev.sluice.http.RequestInfo;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.core.UriInfo;
import java.security.Principal;
import java.util.List;
import java.util.Optional;

/** A JAX-RS request as the rules see it; reads lazily. */
final class JaxrsRequest implements RequestInfo {

  private final ContainerRequestContext ctx;
  private final ContainerAccess container;

  /**
   * The method and path as the client sent them, when read before Jersey's filters changed them.
   */
  private final String sentMethod;

  private final String sentPath;

  JaxrsRequest(ContainerRequestContext ctx, ContainerAccess container) {
    this.ctx = ctx;
    this.container = container;
    this.sentMethod = null;
    this.sentPath = null;
  }

  private JaxrsRequest(JaxrsRequest read) {
    this.ctx = read.ctx;
    this.container = read.container;
    this.sentMethod = read.method();
    this.sentPath = read.path();
  }

  /**
   * {@code ctx}'s request with its method and path read now, as sent (before {@code
   * HttpMethodOverrideFilter} or {@code UriConnegFilter} change them), for a decision made after
   * matching; the rest is read when the decision asks.
   */
  static JaxrsRequest asSent(ContainerRequestContext ctx, ContainerAccess container) {
    return new JaxrsRequest(new JaxrsRequest(ctx, container));
  }

  @Override
  public String method() {
    return sentMethod != null ? sentMethod : ctx.getMethod();
  }

  /**
   * The path below the context path, still encoded (the rules split and decode it): under a servlet
   * container the request URI without the servlet context path, so the servlet mapping is part of
   * it, as the servlet filter sees it; on a standalone server (Grizzly, Jetty) the path below the
   * application's base URI.
   */
  @Override
  public String path() {
    if (sentPath != null) {
      return sentPath;
    }
    String context = container.contextPath(ctx);
    if (context != null) {
      String uri = ctx.getUriInfo().getRequestUri().getRawPath();
      return uri.startsWith(context) ? uri.substring(context.length()) : uri;
    }
    UriInfo uri = ctx.getUriInfo();
    String base = uri.getBaseUri().getRawPath();
    String raw = uri.getRequestUri().getRawPath();
    if (base != null && raw != null && raw.startsWith(base) && base.endsWith("/")) {
      // Both URIs keep their raw paths: at the root, the request's is the answer as it is.
      return base.length() == 1 ? raw : raw.substring(base.length() - 1);
    }
    String p = uri.getPath(false);
    return p.startsWith("/") ? p : "/" + p;
  }

  /**
   * Jersey matches its templates against the encoded path: {@code /lead/..} reaches {@code {id}}.
   */
  @Override
  public boolean dotSegmentsAreData() {
    return true;
  }

  @Override
  public List<String> headers(String name) {
    List<String> v = ctx.getHeaders().get(name);
    return v == null ? List.of() : v;
  }

  @Override
  public Optional<String> remoteAddress() {
    return Optional.ofNullable(container.remoteAddress(ctx));
  }

  @Override
  public Optional<String> principal() {
    Principal p =
        ctx.getSecurityContext() == null ? null : ctx.getSecurityContext().getUserPrincipal();
    return p == null ? Optional.empty() : Optional.ofNullable(p.getName());
  }

  @Override
  public Optional<Object> attribute(String name) {
    return Optional.ofNullable(ctx.getProperty(name));
  }
}
