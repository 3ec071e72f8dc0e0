package dev.sluice.testkit;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A real {@code redis-server} for the annotated test class: one process on a free loopback port,
 * without persistence, started before the class's {@code @BeforeAll} methods and killed after its
 * {@code @AfterAll} methods. Any constructor, lifecycle or test method parameter of type {@link
 * RedisServer} receives it ({@link RedisServer#uri()} is its {@code redis://} address).
 *
 * <pre>{@code
 * @Redis
 * class ScriptTest {
 *   @Test
 *   void counts(RedisServer redis) { ... redis.uri() ... }
 * }
 * }</pre>
 *
 * <p>Sentinels, replicas and clusters are started by the test itself ({@link RedisServer#sentinel},
 * {@link RedisServer#replicaOf}, {@link RedisCluster#start}).
 */
@Documented
@Inherited
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
@ExtendWith(RedisExtension.class)
public @interface Redis {

  /** Arguments after the usual ones, e.g. {@code {"--requirepass", "secret"}}. */
  String[] args() default {};
}
