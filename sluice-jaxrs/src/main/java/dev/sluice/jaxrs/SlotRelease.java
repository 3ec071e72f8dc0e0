package dev.sluice.jaxrs;

import dev.sluice.Slots;
import jakarta.ws.rs.container.ContainerRequestContext;
import java.util.ArrayList;
import java.util.List;
import org.glassfish.jersey.server.ContainerRequest;
import org.glassfish.jersey.server.monitoring.ApplicationEvent;
import org.glassfish.jersey.server.monitoring.ApplicationEventListener;
import org.glassfish.jersey.server.monitoring.RequestEvent;
import org.glassfish.jersey.server.monitoring.RequestEventListener;

/**
 * Gives a request's concurrency slots back when Jersey has finished with it: the response written
 * (streamed ones included), the resource thrown, or the client gone. Jersey's {@code FINISHED}
 * request event comes in every one of those cases, which a response filter does not.
 */
final class SlotRelease implements ApplicationEventListener {

  /** The request property that holds the slots a request took. */
  static final String SLOTS = "dev.sluice.slots";

  private static final RequestEventListener ON_FINISH =
      event -> {
        if (event.getType() == RequestEvent.Type.FINISHED) {
          release(event.getContainerRequest());
        }
      };

  /** Remembers {@code slots} for release when {@code ctx}'s request is finished. */
  @SuppressWarnings("unchecked")
  static void hold(ContainerRequestContext ctx, Slots slots) {
    List<Slots> held = (List<Slots>) ctx.getProperty(SLOTS);
    if (held == null) {
      held = new ArrayList<>(2);
      ctx.setProperty(SLOTS, held);
    }
    held.add(slots);
  }

  @SuppressWarnings("unchecked")
  private static void release(ContainerRequest request) {
    Object held = request == null ? null : request.getProperty(SLOTS);
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
    return ON_FINISH;
  }
}
