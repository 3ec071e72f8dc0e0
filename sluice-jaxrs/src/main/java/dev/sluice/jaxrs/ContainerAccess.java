package dev.sluice.jaxrs;

import dev.sluice.http.RequestLimiter;
import jakarta.ws.rs.container.ContainerRequestContext;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.function.Function;
import org.glassfish.jersey.internal.PropertiesDelegate;
import org.glassfish.jersey.internal.inject.InjectionManager;
import org.glassfish.jersey.server.ContainerRequest;
import org.glassfish.jersey.server.spi.Container;
import org.glassfish.jersey.server.spi.ContainerLifecycleListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What JAX-RS does not say about a request, read from the container underneath Jersey: the peer's
 * address, and under a servlet container the context path. Finds the container at start-up
 * (Grizzly, Jetty, or any servlet container), and fails start-up when it cannot find the peer
 * address and a rule needs it. Thread-safe after start-up.
 */
final class ContainerAccess implements ContainerLifecycleListener {

  private static final Logger LOG = LoggerFactory.getLogger(ContainerAccess.class);

  /** The containers Jersey runs on, by what holds their request. */
  enum Kind {
    SERVLET("jakarta.servlet.http.HttpServletRequest"),
    GRIZZLY("org.glassfish.grizzly.http.server.Request"),
    JETTY("org.eclipse.jetty.server.Request"),
    UNKNOWN(null);

    final String requestType;

    Kind(String requestType) {
      this.requestType = requestType;
    }

    /**
     * The kind of {@code container}, or of the first of its superclasses Jersey ships: Dropwizard's
     * {@code JerseyServletContainer}, for one, is Jersey's {@code ServletContainer} underneath.
     */
    static Kind of(Container container) {
      for (Class<?> c = container.getClass(); c != null; c = c.getSuperclass()) {
        String name = c.getName();
        if (name.startsWith("org.glassfish.jersey.servlet.")) {
          return SERVLET;
        }
        if (name.startsWith("org.glassfish.jersey.grizzly2.")) {
          return GRIZZLY;
        }
        if (name.startsWith("org.glassfish.jersey.jetty.")) {
          return JETTY;
        }
      }
      return UNKNOWN;
    }
  }

  static final String HOW_TO =
      "SluiceFeature cannot find the client's address on this container; supply it with "
          + "SluiceFeature.builder(store).remoteAddress(ctx -> ...) (for example from a request property your "
          + "container filter sets), or key no rule on 'ip'";

  private final InjectionManager injection;
  private final Function<ContainerRequestContext, String> custom;
  private final RequestLimiter limiter;
  private volatile Kind kind = Kind.UNKNOWN;
  private volatile Class<?> requestType;
  private volatile MethodHandle remoteAddr;
  private volatile MethodHandle contextPath;
  private volatile boolean started;
  private final java.util.concurrent.atomic.AtomicBoolean warned =
      new java.util.concurrent.atomic.AtomicBoolean();

  ContainerAccess(
      InjectionManager injection,
      Function<ContainerRequestContext, String> custom,
      RequestLimiter limiter) {
    this.injection = injection;
    this.custom = custom;
    this.limiter = limiter;
  }

  @Override
  public void onStartup(Container container) {
    Kind k = Kind.of(container);
    if (k != Kind.UNKNOWN) {
      try {
        bind(k, container.getClass().getClassLoader());
      } catch (ReflectiveOperationException | LinkageError e) {
        LOG.debug("cannot read the {} request", k, e);
        k = Kind.UNKNOWN;
      }
    }
    this.kind = k;
    this.started = true;
    if (k == Kind.UNKNOWN && custom == null && limiter.keysOnClientAddress()) {
      throw new IllegalStateException(
          HOW_TO + " (container: " + container.getClass().getName() + ")");
    }
    LOG.info(
        "rate limit rules in force (client address from {}):\n{}",
        custom != null
            ? "the configured function"
            : k == Kind.UNKNOWN ? "nowhere: no rule keys on ip" : k,
        limiter);
  }

  private void bind(Kind k, ClassLoader loader) throws ReflectiveOperationException {
    Class<?> type = Class.forName(k.requestType, false, loader);
    MethodHandles.Lookup lookup = MethodHandles.publicLookup();
    MethodHandle addr;
    try {
      addr = lookup.findVirtual(type, "getRemoteAddr", MethodType.methodType(String.class));
    } catch (NoSuchMethodException e) {
      // Jetty 12's core Request reads it through a static helper.
      addr = lookup.findStatic(type, "getRemoteAddr", MethodType.methodType(String.class, type));
    }
    this.remoteAddr = addr.asType(MethodType.methodType(String.class, Object.class));
    if (k == Kind.SERVLET) {
      this.contextPath =
          lookup
              .findVirtual(type, "getContextPath", MethodType.methodType(String.class))
              .asType(MethodType.methodType(String.class, Object.class));
    }
    this.steps = new Steps(type);
    this.requestType = type;
  }

  /**
   * The container's request for {@code ctx}. Grizzly and the servlet containers hand it to Jersey
   * in the request's properties delegate (wrapped in Jersey's tracing delegate), where it is read
   * with a few field loads; elsewhere (Jetty) it is looked up through injection, which costs a
   * scope lookup and a factory per call.
   */
  private Object containerRequest(ContainerRequestContext ctx, Class<?> type) throws Throwable {
    Steps steps = this.steps;
    if (steps != null && ctx instanceof ContainerRequest cr) {
      Object d = cr.getPropertiesDelegate();
      for (int depth = 0; depth < 4 && d != null; depth++) {
        Step step = steps.get(d.getClass());
        if (step.getter == null) {
          break;
        }
        d = (Object) step.getter.invokeExact(d);
        if (step.request) {
          return d != null ? d : injection.getInstance(type);
        }
      }
    }
    return injection.getInstance(type);
  }

  /** One field to read on the way from a properties delegate to the container's request. */
  private record Step(MethodHandle getter, boolean request) {
    static final Step NONE = new Step(null, false);
  }

  /** Per delegate class, the field that holds the request or the delegate it wraps. */
  private static final class Steps extends ClassValue<Step> {
    private final Class<?> requestType;

    Steps(Class<?> requestType) {
      this.requestType = requestType;
    }

    @Override
    protected Step computeValue(Class<?> type) {
      java.lang.reflect.Field request = null;
      java.lang.reflect.Field inner = null;
      for (java.lang.reflect.Field f : type.getDeclaredFields()) {
        if (java.lang.reflect.Modifier.isStatic(f.getModifiers())) {
          continue;
        }
        if (requestType.isAssignableFrom(f.getType())) {
          request = f;
        } else if (f.getType() == PropertiesDelegate.class) {
          inner = f;
        }
      }
      java.lang.reflect.Field next = request != null ? request : inner;
      if (next == null) {
        return Step.NONE;
      }
      try {
        next.setAccessible(true);
        MethodHandle get =
            MethodHandles.lookup()
                .unreflectGetter(next)
                .asType(MethodType.methodType(Object.class, Object.class));
        return new Step(get, request != null);
      } catch (ReflectiveOperationException | RuntimeException e) {
        // On the module path Jersey's fields stay closed: look the request up instead.
        LOG.debug("cannot read the container's request from {}", type, e);
        return Step.NONE;
      }
    }
  }

  private volatile Steps steps;

  @Override
  public void onReload(Container container) {
    onStartup(container);
  }

  @Override
  public void onShutdown(Container container) {}

  /** The peer's address, or null when none can be found. */
  String remoteAddress(ContainerRequestContext ctx) {
    if (custom != null) {
      return custom.apply(ctx);
    }
    String address = call(remoteAddr, ctx);
    if (address == null && !started && warned.compareAndSet(false, true)) {
      // A container that never announced its start-up (a test harness): say so once, loudly.
      LOG.error("{}; until then, rules keyed on ip limit nobody", HOW_TO);
    }
    return address;
  }

  /** The servlet context path, or null when Jersey does not run in a servlet container. */
  String contextPath(ContainerRequestContext ctx) {
    return kind == Kind.SERVLET ? call(contextPath, ctx) : null;
  }

  /** Calls a getter of the container's request, typed {@code (Object)String}: an exact call. */
  private String call(MethodHandle method, ContainerRequestContext ctx) {
    Class<?> type = requestType;
    if (method == null || type == null) {
      return null;
    }
    try {
      Object request = containerRequest(ctx, type);
      return request == null ? null : (String) method.invokeExact(request);
    } catch (Throwable e) {
      if (e instanceof Error err && !(e instanceof LinkageError)) {
        throw err;
      }
      LOG.debug("cannot read the container's request", e);
      return null;
    }
  }
}
