package dev.sluice.testkit;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A real memcached for the annotated test class: one process on a free loopback port, started
 * before the class's {@code @BeforeAll} methods and killed after its {@code @AfterAll} methods. Any
 * constructor, lifecycle or test method parameter of type {@link MemcachedServer} receives it
 * ({@link MemcachedServer#address()} is its {@code host:port}).
 *
 * <pre>{@code
 * @Memcached(megabytes = 2)
 * class EvictionTest {
 *   @Test
 *   void evicts(MemcachedServer memcached) { ... memcached.address() ... }
 * }
 * }</pre>
 *
 * <p>Without a {@code memcached} binary the class is skipped (the first one fails and says how to
 * install it); where a Docker engine is reachable, a container runs instead.
 */
@Documented
@Inherited
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
@ExtendWith(MemcachedExtension.class)
public @interface Memcached {

  /** Item memory, {@code -m}, in megabytes: small (1 or 2) to make it evict. */
  int megabytes() default 64;

  /** Arguments after the usual ones, e.g. {@code {"-M"}} to refuse writes rather than evict. */
  String[] args() default {};
}
