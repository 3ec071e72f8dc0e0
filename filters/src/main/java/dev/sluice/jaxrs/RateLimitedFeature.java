package dev.sluice.jaxrs;

import dev.sluice.RequestLimiter;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import jakarta.ws.rs.HttpMethod;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.container.DynamicFeature;
import jakarta.ws.rs.container.ResourceInfo;
import jakarta.ws.rs.core.FeatureContext;
import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Reads {@link RateLimited} on resource classes and methods and binds a filter with those rules to
 * each annotated method (as Jersey's RolesAllowedDynamicFeature does for roles).
 */
final class RateLimitedFeature implements DynamicFeature {

  private final Function<RuleSet, RequestLimiter> limiters;
  private final Supplier<RuleSet> base;
  private final Function<ContainerRequestContext, String> remoteAddress;

  RateLimitedFeature(Function<RuleSet, RequestLimiter> limiters, Supplier<RuleSet> base,
      Function<ContainerRequestContext, String> remoteAddress) {
    this.limiters = limiters;
    this.base = base;
    this.remoteAddress = remoteAddress;
  }

  @Override
  public void configure(ResourceInfo resource, FeatureContext context) {
    Method m = resource.getResourceMethod();
    Class<?> type = resource.getResourceClass();
    List<RateLimited> limits = new ArrayList<>(List.of(type.getAnnotationsByType(RateLimited.class)));
    limits.addAll(List.of(m.getAnnotationsByType(RateLimited.class)));
    if (limits.isEmpty()) {
      return;
    }
    String httpMethod = httpMethod(m);
    String template = template(type, m);
    RuleSet current = base.get();
    RuleSet.Builder rules = RuleSet.builder().trustedProxies(current.trustedProxies())
        .headers(current.headers()).resetFormat(current.resetFormat());
    int i = 0;
    for (RateLimited l : limits) {
      String where = type.getSimpleName() + "." + m.getName() + " @RateLimited[" + i++ + "]";
      Duration period = dev.sluice.rules.Periods.parse(l.period());
      if (period == null) {
        throw new IllegalStateException(where + ": bad period '" + l.period() + "' (use e.g. 500ms, 10s, 5m, 1h)");
      }
      String id = l.id().isEmpty() ? (httpMethod == null ? "*" : httpMethod) + " " + template : l.id();
      if (limits.size() > 1 && l.id().isEmpty()) {
        id = id + " " + l.limit() + "/" + l.period();
      }
      try {
        Rule.Builder b = Rule.builder(id).path(pattern(template)).key(l.key()).algorithm(l.algorithm())
            .tier(l.limit(), period);
        if (httpMethod != null) {
          b.methods(httpMethod);
        }
        rules.rule(b.build());
      } catch (IllegalArgumentException e) {
        throw new IllegalStateException(where + ": " + e.getMessage(), e);
      }
    }
    context.register(new Filter(limiters.apply(rules.build()), base, remoteAddress), Priorities.AUTHENTICATION + 60);
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
        for (String seg : p.value().split("/")) {
          if (!seg.isEmpty()) {
            sb.append('/').append(seg);
          }
        }
      }
    }
    return sb.length() == 0 ? "/" : sb.toString();
  }

  /** A template with its regular expressions dropped: {@code {id: \d+}} becomes {@code {id}}. */
  static String pattern(String template) {
    return template.replaceAll("\\{\\s*([\\w.-]+)\\s*:[^}]*}", "{$1}");
  }

  /**
   * Enforces one method's annotations, after matching and authentication (priority AUTHENTICATION +
   * 60). The feature's kill switch turns it off too.
   */
  static final class Filter implements ContainerRequestFilter {
    private final RequestLimiter limiter;
    private final Supplier<RuleSet> base;
    private final Function<ContainerRequestContext, String> remoteAddress;

    Filter(RequestLimiter limiter, Supplier<RuleSet> base, Function<ContainerRequestContext, String> remoteAddress) {
      this.limiter = limiter;
      this.base = base;
      this.remoteAddress = remoteAddress;
    }

    @Override
    public void filter(ContainerRequestContext ctx) {
      if (base.get().enabled()) {
        Responses.apply(limiter, limiter.decide(new JaxrsRequest(ctx, remoteAddress)), ctx);
      }
    }
  }
}
