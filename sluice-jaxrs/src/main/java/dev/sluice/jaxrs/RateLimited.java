package dev.sluice.jaxrs;

import dev.sluice.Algorithm;
import dev.sluice.OnStoreFailure;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Repeatable;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Limits a resource method, or every method of a resource class: at most {@link #limit()} requests
 * per {@link #period()}. Repeat it for several tiers or limits; a method's annotations add to its
 * class's. Enforced by {@link SluiceFeature} after resource matching. The default id is the HTTP
 * method and the resource's path template, e.g. {@code GET /v1/organizations/{orgId}/product/{id}}:
 * its own endpoint group.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD})
@Repeatable(RateLimited.List.class)
public @interface RateLimited {

  /** Requests per period, &gt; 0. */
  long limit();

  /** The period: {@code 500ms}, {@code 10s}, {@code 5m}, {@code 1h}, {@code 1d}. */
  String period();

  Algorithm algorithm() default Algorithm.SLIDING_WINDOW;

  /**
   * Key sources in order; the first that yields a value wins. By default the authenticated user,
   * else the client address: nothing a client can invent. Name a header only once an authentication
   * filter has validated it.
   */
  String[] key() default {"user", "ip"};

  /** The rule id; empty for the endpoint group (method and path template). */
  String id() default "";

  /**
   * What a request gets when the counter store fails or times out: let through (the default), 503,
   * or limited in this instance's memory at {@code limit ÷ instances}.
   */
  OnStoreFailure onStoreFailure() default OnStoreFailure.ALLOW;

  /** How many instances share the limit, for {@link OnStoreFailure#LOCAL}; at least 1. */
  int instances() default 1;

  /** Holds repeated {@link RateLimited} annotations. */
  @Documented
  @Retention(RetentionPolicy.RUNTIME)
  @Target({ElementType.TYPE, ElementType.METHOD})
  @interface List {
    RateLimited[] value();
  }
}
