package dev.sluice.jaxrs;

import dev.sluice.Outcome;
import dev.sluice.Slots;
import dev.sluice.http.Admission;
import dev.sluice.http.RequestLimiter;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.core.MultivaluedMap;
import jakarta.ws.rs.core.Response;
import java.io.IOException;
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

    private Applied(Outcome out) {
      this.allowed = out.allowed();
      this.remaining = out.remaining();
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
   * Decides, and aborts the request with a 429 (or 503) when it is rejected. Never throws: the
   * limiter fails open on its own errors, and an error here lets the request through.
   */
  static void apply(RequestLimiter limiter, Decider decider, ContainerRequestContext ctx) {
    try {
      Admission.admit(limiter, new Exchange(decider, ctx));
    } catch (IOException e) {
      // A JAX-RS refusal is an aborted request: nothing is written here.
      LOG.error("rate limiting failed; the request goes on unlimited", e);
    }
  }

  /** How a filter decides a request: by the rules, or by a resource method's binding. */
  interface Decider {
    void decide(ContainerRequestContext ctx, Outcome out);
  }

  /** A JAX-RS request: its headers wait in the request for the response filter. */
  private static final class Exchange implements Admission.Exchange {
    private final Decider decider;
    private final ContainerRequestContext ctx;
    private Applied applied;

    Exchange(Decider decider, ContainerRequestContext ctx) {
      this.decider = decider;
      this.ctx = ctx;
    }

    @Override
    public void decide(Outcome out) {
      decider.decide(ctx, out);
    }

    @Override
    public boolean takes(Outcome out) {
      Applied earlier = (Applied) ctx.getProperty(DECISION);
      if (earlier != null && out.allowed() && out.remaining() >= earlier.remaining) {
        return false;
      }
      applied = new Applied(out);
      ctx.setProperty(DECISION, applied);
      return true;
    }

    @Override
    public void accept(String name, String value) {
      applied.accept(name, value);
    }

    @Override
    public void hold(Slots slots) {
      SlotRelease.hold(ctx, slots);
    }

    @Override
    public void refuse(int status, String contentType, String body) {
      Response.ResponseBuilder r = Response.status(status).type(contentType).entity(body);
      for (int i = 0; i < applied.size; i += 2) {
        r.header(applied.headers[i], applied.headers[i + 1]);
      }
      ctx.abortWith(r.build());
    }
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
