package dev.sluice.jaxrs;

import dev.sluice.http.Admission;
import dev.sluice.http.RateLimitHeaders;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerResponseContext;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.MultivaluedMap;
import jakarta.ws.rs.core.Response;
import java.lang.annotation.Annotation;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Decisions into JAX-RS responses and headers. */
final class Responses {

  private static final Logger LOG = LoggerFactory.getLogger(Responses.class);

  /**
   * The request property that carries the decision from the request filter to the response filter.
   */
  static final String DECISION = "dev.sluice.decision";

  /**
   * The request property that holds a request the rules have not decided yet (a {@link
   * JaxrsRequest} as sent), while resources carry {@link RateLimited}: it is decided once, after
   * matching, with the annotations of the method it reaches.
   */
  static final String PENDING = "dev.sluice.pending";

  /** Takes the request the rules have not decided yet off {@code ctx}; null when none waits. */
  static JaxrsRequest pending(ContainerRequestContext ctx) {
    if (ctx.getProperty(PENDING) instanceof JaxrsRequest pending) {
      ctx.removeProperty(PENDING);
      return pending;
    }
    return null;
  }

  private Responses() {}

  /**
   * What a request's decisions leave for its response: whether the deciding one allowed, how much
   * it left, and its headers, written once from the live outcome.
   */
  static final class Applied implements BiConsumer<String, String> {
    final boolean allowed;
    final long remaining;

    /** Header names and values, in turn. */
    private String[] headers = new String[16];

    private int size;

    private Applied(Admission a) {
      this.allowed = a.allowed();
      this.remaining = a.remaining();
    }

    @Override
    public void accept(String name, String value) {
      if (size == headers.length) {
        headers = Arrays.copyOf(headers, size * 2);
      }
      headers[size++] = name;
      headers[size++] = value;
    }
  }

  /**
   * Carries {@code a} out on {@code ctx}: holds its slots until Jersey finishes the request, keeps
   * the headers of the tighter decision and, when refused, aborts with the refusal. A failure here
   * lets the request through (logged), as a failure to decide does.
   */
  static void apply(ContainerRequestContext ctx, Admission a) {
    SlotRelease.hold(ctx, a.slots());
    try {
      Applied headers = tighter(ctx, a);
      if (headers == null) {
        return;
      }
      a.writeHeaders(headers);
      if (a.refused()) {
        ctx.abortWith(refusal(a, headers));
      }
    } catch (RuntimeException e) {
      LOG.warn("rate limit headers or refusal failed; the request goes on", e);
    }
  }

  /**
   * Carries {@code a}, decided when the response was ready, out on {@code response}: as {@link
   * #apply(ContainerRequestContext, Admission)}, with a refusal replacing the response.
   */
  static void apply(ContainerRequestContext ctx, ContainerResponseContext response, Admission a) {
    SlotRelease.hold(ctx, a.slots());
    try {
      Applied headers = tighter(ctx, a);
      if (headers == null) {
        return;
      }
      if (a.refused()) {
        // What another filter answered (a 401's WWW-Authenticate, a cookie, its caching) must not
        // reach a client that is refused: the refusal replaces the whole response.
        response.getHeaders().clear();
      }
      a.writeHeaders(headers);
      if (a.refused()) {
        response.setStatus(a.status());
        response.setEntity(
            a.problem(), new Annotation[0], MediaType.valueOf(RateLimitHeaders.PROBLEM_JSON));
      }
    } catch (RuntimeException e) {
      LOG.warn("rate limit headers or refusal failed; the request goes on", e);
    }
  }

  /**
   * The headers this decision leaves for the response, kept in the request for the response filter;
   * null when they are not the ones to send. A request decided twice (the rules, then a resource's
   * {@code @RateLimited}) keeps the headers of the tighter decision; a refusal always takes them,
   * and a decision no limit applied to leaves none.
   */
  static Applied tighter(ContainerRequestContext ctx, Admission a) {
    if (!a.limited()) {
      return null;
    }
    Applied earlier = (Applied) ctx.getProperty(DECISION);
    if (earlier != null && a.allowed() && a.remaining() >= earlier.remaining) {
      return null;
    }
    Applied applied = new Applied(a);
    ctx.setProperty(DECISION, applied);
    return applied;
  }

  /** The response that refuses a request: the status, the headers and the problem body. */
  static Response refusal(Admission a, Applied headers) {
    Response.ResponseBuilder r =
        Response.status(a.status()).type(RateLimitHeaders.PROBLEM_JSON).entity(a.problem());
    for (int i = 0; i < headers.size; i += 2) {
      r.header(headers.headers[i], headers.headers[i + 1]);
    }
    return r.build();
  }

  /**
   * Adds the decision's headers to a response that does not carry them yet. Jersey's header map
   * lower-cases a name (a new string) each time it hashes one: whether a header is there is read
   * from the response's few names instead, in one walk over them, and each value list is put whole,
   * which hashes once where {@code putSingle} hashes twice.
   */
  static void addHeaders(Applied applied, MultivaluedMap<String, Object> headers) {
    try {
      long present = headers.isEmpty() ? 0 : present(applied, headers.keySet());
      for (int i = 0; i < applied.size; i += 2) {
        if ((present & (1L << (i / 2))) == 0) {
          List<Object> value = new ArrayList<>(1);
          value.add(applied.headers[i + 1]);
          headers.put(applied.headers[i], value);
        }
      }
    } catch (RuntimeException e) {
      LOG.error("rate limit headers failed; the response goes on without them", e);
    }
  }

  /** Which of the decision's headers {@code names} has (bit i: the i-th), ignoring case. */
  private static long present(Applied applied, Set<String> names) {
    long present = 0;
    for (String n : names) {
      for (int i = 0; i < applied.size && i < 128; i += 2) {
        if (n.equalsIgnoreCase(applied.headers[i])) {
          present |= 1L << (i / 2);
        }
      }
    }
    return present;
  }
}
