package dev.sluice.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/**
 * {@link Memcached @Memcached} runs one memcached per test class, with the class's options, gives
 * it to every parameter that asks, and kills it once the class is done: a sample class is run
 * through the JUnit Platform and what it saw is checked.
 */
class MemcachedExtensionTest {

  /** What the sample saw, in order: the server each method received. */
  static final List<MemcachedServer> SEEN = new ArrayList<>();

  static final List<String> SETTINGS = new ArrayList<>();

  /** Answers at the sample's {@code @AfterAll}: the server still runs there. */
  static boolean answeredAfterAll;

  @Memcached(
      megabytes = 2,
      args = {"-M"})
  static class Sample {

    @BeforeAll
    static void before(MemcachedServer memcached) {
      SEEN.add(memcached);
      SETTINGS.addAll(memcached.command("stats settings", "END"));
    }

    @Test
    void first(MemcachedServer memcached) {
      SEEN.add(memcached);
    }

    @Test
    void second(MemcachedServer memcached) {
      SEEN.add(memcached);
    }

    @Nested
    class Inner {
      @Test
      void shares(MemcachedServer memcached) {
        SEEN.add(memcached);
      }
    }

    @AfterAll
    static void after(MemcachedServer memcached) {
      answeredAfterAll = memcached.answers();
    }
  }

  @Test
  void oneServerPerClassWithItsOptionsStoppedAfterTheClass() {
    SummaryGeneratingListener listener = new SummaryGeneratingListener();
    LauncherFactory.create()
        .execute(
            LauncherDiscoveryRequestBuilder.request().selectors(selectClass(Sample.class)).build(),
            listener);
    TestExecutionSummary summary = listener.getSummary();
    summary.getFailures().forEach(f -> f.getException().printStackTrace());
    assertEquals(3, summary.getTestsSucceededCount());
    assertEquals(0, summary.getTotalFailureCount());

    assertEquals(4, SEEN.size());
    MemcachedServer server = SEEN.get(0);
    assertNotNull(server);
    SEEN.forEach(s -> assertSame(server, s));
    assertTrue(SETTINGS.contains("STAT maxbytes 2097152"), SETTINGS.toString());
    assertTrue(SETTINGS.contains("STAT evictions off"), SETTINGS.toString());
    assertTrue(answeredAfterAll);
    assertFalse(server.answers(), "the server still answers on " + server.address());
  }
}
