package dev.sluice.jaxrs;

import dev.sluice.Slots;
import dev.sluice.http.RequestLimiter;
import jakarta.ws.rs.container.ContainerRequestContext;
import java.util.ArrayList;
import java.util.List;
import org.glassfish.jersey.server.ContainerRequest;
import org.glassfish.jersey.server.monitoring.ApplicationEvent;
import org.glassfish.jersey.server.monitoring.ApplicationEventListener;
import org.glassfish.jersey.server.monitoring.RequestEvent;
import org.glassfish.jersey.server.monitoring.RequestEventListener;

/**
 * Gives a request's concurrency slots back when Jersey has finished with it, if they are not back
 * already: the response written (streamed ones included), the resource thrown, or the client gone.
 * Jersey's {@code FINISHED} request event comes in every one of those cases, which a response
 * filter does not. It comes after the response reached the client: {@link ReleaseBeforeResponse}
 * gives the slots back before, whenever Jersey writes the response itself.
 *
 * <p>Jersey builds an event object at every step of a request it follows (about fifteen), so a
 * request is followed only while the rules in force may hold slots.
 */
final class SlotRelease implements ApplicationEventListener {

  /** The request property that holds the slots a followed request took. */
  static final String SLOTS = "dev.sluice.slots";

  private final RequestLimiter limiter;

  SlotRelease(RequestLimiter limiter) {
    this.limiter = limiter;
  }

  private static final RequestEventListener ON_FINISH =
      event -> {
        if (event.getType() == RequestEvent.Type.FINISHED) {
          release(event.getContainerRequest());
        }
      };

  /**
   * Remembers {@code slots} for release when {@code ctx}'s request is finished. A request that
   * began before rules holding slots were in force is not followed: its slots go back at once,
   * rather than never.
   */
  @SuppressWarnings("unchecked")
  static void hold(ContainerRequestContext ctx, Slots slots) {
    if (!slots.holds()) {
      return;
    }
    if (ctx.getProperty(SLOTS) instanceof List<?> held) {
      ((List<Slots>) held).add(slots);
    } else {
      slots.release();
    }
  }

  private static void release(ContainerRequest request) {
    release(request == null ? null : request.getProperty(SLOTS));
  }

  /**
   * Gives back the slots in {@code held}, the value of a request's {@link #SLOTS} property (nothing
   * when it holds none): before its response can reach the client ({@link ReleaseBeforeResponse}),
   * and again, doing nothing then, when Jersey has finished with it.
   */
  @SuppressWarnings("unchecked")
  static void release(Object held) {
    if (held instanceof List<?> list) {
      for (Slots s : (List<Slots>) list) {
        s.release();
      }
    }
  }

  @Override
  public void onEvent(ApplicationEvent event) {}

  @Override
  public RequestEventListener onRequest(RequestEvent requestEvent) {
    if (!limiter.mayHoldSlots()) {
      return null;
    }
    requestEvent.getContainerRequest().setProperty(SLOTS, new ArrayList<Slots>(2));
    return ON_FINISH;
  }
}
