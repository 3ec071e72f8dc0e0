package dev.sluice.testkit;

import java.lang.annotation.Annotation;
import java.lang.reflect.AnnotatedElement;
import java.util.Optional;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * One server of type {@code S} per test class that carries annotation {@code A}: started before the
 * class's first {@code @BeforeAll}, closed after its last {@code @AfterAll}, and given to any
 * constructor, lifecycle or test method parameter of type {@code S}. {@code @Nested} classes share
 * their enclosing class's server. A store's fixture is an annotation, its server class and a
 * subclass of this one that says how to start the server from the annotation.
 */
abstract class ServerExtension<A extends Annotation, S extends AutoCloseable>
    implements BeforeAllCallback, ParameterResolver {

  private final Class<A> annotation;
  private final Class<S> server;

  ServerExtension(Class<A> annotation, Class<S> server) {
    this.annotation = annotation;
    this.server = server;
  }

  /** Starts a server as {@code options} asks. */
  abstract S start(A options);

  private ExtensionContext.Namespace namespace() {
    return ExtensionContext.Namespace.create(ServerExtension.class, server);
  }

  @Override
  public void beforeAll(ExtensionContext context) {
    // The store looks in enclosing classes' stores too: a @Nested class reuses their server.
    if (context.getStore(namespace()).get(Instance.class) != null) {
      return;
    }
    A options = find(context.getRequiredTestClass()).orElseThrow();
    // Closed by JUnit when the class's context closes, after its @AfterAll methods.
    context.getStore(namespace()).put(Instance.class, new Instance(start(options)));
  }

  private Optional<A> find(AnnotatedElement element) {
    A a = element.getAnnotation(annotation);
    if (a == null && element instanceof Class<?> c && c.getEnclosingClass() != null) {
      return find(c.getEnclosingClass());
    }
    return Optional.ofNullable(a);
  }

  /** The class's server, closed with the class's context. */
  private record Instance(AutoCloseable server)
      implements ExtensionContext.Store.CloseableResource {
    @Override
    public void close() throws Exception {
      server.close();
    }
  }

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    return parameter.getParameter().getType() == server;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    Instance i = context.getStore(namespace()).get(Instance.class, Instance.class);
    if (i == null) {
      throw new ParameterResolutionException(
          "no " + server.getSimpleName() + " for " + parameter.getDeclaringExecutable());
    }
    return server.cast(i.server());
  }
}
