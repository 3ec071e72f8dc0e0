package dev.sluice.jaxrs;

import dev.sluice.Periods;
import dev.sluice.http.Admission;
import dev.sluice.http.RequestLimiter;
import dev.sluice.http.Rule;
import jakarta.ws.rs.HttpMethod;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.container.DynamicFeature;
import jakarta.ws.rs.container.ResourceInfo;
import jakarta.ws.rs.core.FeatureContext;
import jakarta.ws.rs.core.MultivaluedMap;
import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads {@link RateLimited} on resource classes and methods and binds a filter with those rules to
 * each annotated method (as Jersey's RolesAllowedDynamicFeature does for roles).
 */
final class RateLimitedFeature implements DynamicFeature {

  private final RequestLimiter limiter;
  private final ContainerAccess container;

  RateLimitedFeature(RequestLimiter limiter, ContainerAccess container) {
    this.limiter = limiter;
    this.container = container;
  }

  @Override
  public void configure(ResourceInfo resource, FeatureContext context) {
    Method m = resource.getResourceMethod();
    Class<?> type = resource.getResourceClass();
    List<RateLimited> limits =
        new ArrayList<>(List.of(type.getAnnotationsByType(RateLimited.class)));
    limits.addAll(List.of(m.getAnnotationsByType(RateLimited.class)));
    if (limits.isEmpty()) {
      return;
    }
    String httpMethod = httpMethod(m);
    String template = template(type, m);
    List<Rule> rules = new ArrayList<>();
    int i = 0;
    for (RateLimited l : limits) {
      String where = type.getSimpleName() + "." + m.getName() + " @RateLimited[" + i++ + "]";
      Duration period =
          Periods.parse(l.period())
              .orElseThrow(
                  () ->
                      new IllegalStateException(
                          where
                              + ": bad period '"
                              + l.period()
                              + "' (use e.g. 500ms, 10s, 5m, 1h)"));
      String id =
          l.id().isEmpty() ? (httpMethod == null ? "*" : httpMethod) + " " + template : l.id();
      if (limits.size() > 1 && l.id().isEmpty()) {
        id = id + " " + l.limit() + "/" + l.period();
      }
      try {
        // The path is for display and path keys: Jersey has already routed the request here, so a
        // bound rule applies to every path the method serves, whatever regular expression its
        // template holds.
        Rule.Builder b =
            Rule.builder(id)
                .path(pattern(template))
                .key(l.key())
                .algorithm(l.algorithm())
                .tier(l.limit(), period)
                .onStoreFailure(l.onStoreFailure())
                .instances(l.instances());
        if (httpMethod != null) {
          b.methods(httpMethod);
        }
        rules.add(b.build());
      } catch (IllegalArgumentException e) {
        throw new IllegalStateException(where + ": " + e.getMessage(), e);
      }
    }
    RequestLimiter.BoundRules bound;
    try {
      bound = limiter.bind(rules);
    } catch (IllegalArgumentException e) {
      throw new IllegalStateException(
          type.getSimpleName() + "." + m.getName() + ": " + e.getMessage(), e);
    }
    context.register(new Filter(limiter, bound, container), Priorities.AUTHENTICATION + 60);
  }

  private static String httpMethod(Method m) {
    for (Annotation a : m.getAnnotations()) {
      HttpMethod hm = a.annotationType().getAnnotation(HttpMethod.class);
      if (hm != null) {
        return hm.value();
      }
    }
    return null;
  }

  /** The resource's path template, e.g. {@code /v1/organizations/{orgId}/product/{id}}. */
  static String template(Class<?> type, Method m) {
    StringBuilder sb = new StringBuilder();
    Path classPath = type.getAnnotation(Path.class);
    Path methodPath = m.getAnnotation(Path.class);
    for (Path p : new Path[] {classPath, methodPath}) {
      if (p != null) {
        for (String seg : p.value().split("/", -1)) {
          if (!seg.isEmpty()) {
            sb.append('/').append(seg);
          }
        }
      }
    }
    return sb.length() == 0 ? "/" : sb.toString();
  }

  /** A template with its regular expressions dropped: {@code {id: \\d+}} becomes {@code {id}}. */
  static String pattern(String template) {
    StringBuilder out = new StringBuilder(template.length());
    int i = 0;
    while (i < template.length()) {
      char c = template.charAt(i);
      if (c != '{') {
        out.append(c);
        i++;
        continue;
      }
      // A parameter: its name, then an optional ": regex" whose own braces nest.
      int depth = 0;
      int end = i;
      for (; end < template.length(); end++) {
        char e = template.charAt(end);
        depth += e == '{' ? 1 : e == '}' ? -1 : 0;
        if (depth == 0) {
          break;
        }
      }
      String inside = template.substring(i + 1, Math.min(end, template.length()));
      int colon = inside.indexOf(':');
      out.append('{').append((colon < 0 ? inside : inside.substring(0, colon)).trim()).append('}');
      i = end + 1;
    }
    return out.toString();
  }

  /**
   * Enforces one method's annotations, with the rules file's rules, after matching and
   * authentication (priority AUTHENTICATION + 60). The rules live in the feature's limiter, so they
   * follow its reloads, kill switch and per-rule switches.
   */
  static final class Filter implements ContainerRequestFilter {
    private final RequestLimiter limiter;
    private final RequestLimiter.BoundRules bound;
    private final ContainerAccess container;

    Filter(RequestLimiter limiter, RequestLimiter.BoundRules bound, ContainerAccess container) {
      this.limiter = limiter;
      this.bound = bound;
      this.container = container;
    }

    /**
     * Decides the annotations, and the rules file's rules with them when the request filter left
     * them for after matching: one decision, so a refusal by either takes nothing from the other.
     */
    @Override
    public void filter(ContainerRequestContext ctx) {
      JaxrsRequest pending = Responses.pending(ctx);
      Responses.apply(
          ctx,
          pending != null
              ? Admission.decideWithRules(limiter, bound, pending, pathParameters(ctx))
              : Admission.decide(
                  limiter, bound, new JaxrsRequest(ctx, container), pathParameters(ctx)));
    }

    private static Map<String, String> pathParameters(ContainerRequestContext ctx) {
      MultivaluedMap<String, String> params;
      try {
        params = ctx.getUriInfo().getPathParameters(true);
      } catch (IllegalArgumentException e) {
        // A malformed escape Jersey cannot decode: the rules key on the text as it was sent.
        params = ctx.getUriInfo().getPathParameters(false);
      }
      if (params.isEmpty()) {
        return Map.of();
      }
      Map<String, String> out = new HashMap<>(params.size() * 2);
      params.forEach(
          (k, v) -> {
            if (!v.isEmpty()) {
              out.put(k, v.get(0));
            }
          });
      return out;
    }
  }
}
