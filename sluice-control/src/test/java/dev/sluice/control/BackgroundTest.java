package dev.sluice.control;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Background;
import dev.sluice.RateLimiter;
import dev.sluice.Sync;
import dev.sluice.spi.ReferenceCounterStore;
import dev.sluice.spi.SharedValues;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RunnableScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Sluice's background work (knob reads, a governor's ticks, two-layer syncs) runs on one scheduler:
 * the JVM's shared one, or the one a builder names. Nothing else starts a thread of its own but the
 * coarse clock.
 */
class BackgroundTest {

  private final ReferenceCounterStore store = new ReferenceCounterStore();
  private final SharedValues values = store.sharedValues().orElseThrow();

  /** The tasks scheduled on {@link #app}, in order. */
  private final List<RunnableScheduledFuture<?>> tasks = new CopyOnWriteArrayList<>();

  private final ScheduledThreadPoolExecutor app =
      new ScheduledThreadPoolExecutor(1) {
        @Override
        protected <V> RunnableScheduledFuture<V> decorateTask(
            Runnable r, RunnableScheduledFuture<V> task) {
          tasks.add(task);
          return task;
        }
      };

  @AfterEach
  void stop() {
    app.shutdownNow();
  }

  private Governor.Builder governor() {
    return Governor.builder(values, "reindex")
        .signal(() -> 1)
        .setpoint(2)
        .gains(1, 0, 0)
        .maxRate(100)
        .interval(Duration.ofMinutes(1));
  }

  @Test
  void eachTaskRunsOnTheSchedulerItsBuilderNamesAndLeavesItWhenClosed() {
    Governor g = governor().scheduler(app).start();
    assertEquals(1, tasks.size(), "the governor's tick");
    KnobWatcher w = KnobWatcher.start(values, Duration.ofMinutes(1), app);
    assertEquals(2, tasks.size(), "and the knobs' read");
    RateLimiter synced =
        RateLimiter.fixedWindow(store)
            .id("api")
            .tier(10, Duration.ofSeconds(1))
            .sync(Sync.every(Duration.ofMillis(100)))
            .scheduler(app)
            .build();
    synced.tryAcquire("k");
    assertEquals(3, tasks.size(), "and the two-layer sync, from the first decision");
    g.close();
    w.close();
    assertTrue(tasks.get(0).isCancelled(), "closed, the governor's tick is cancelled");
    assertTrue(tasks.get(1).isCancelled(), "and the watcher's read");
    assertTrue(!tasks.get(2).isCancelled(), "the sync runs while its store lives");
  }

  @Test
  void byDefaultNoSluiceThreadRunsButTheSharedSchedulersAndTheClock() {
    Governor g = governor().start();
    KnobWatcher w = KnobWatcher.start(values, Duration.ofMinutes(1), Background.shared());
    RateLimiter synced =
        RateLimiter.fixedWindow(store)
            .id("api")
            .tier(10, Duration.ofSeconds(1))
            .sync(Sync.every(Duration.ofMillis(100)))
            .build();
    synced.tryAcquire("k");
    List<String> names =
        Thread.getAllStackTraces().keySet().stream()
            .map(Thread::getName)
            .filter(n -> n.startsWith("sluice-"))
            .sorted()
            .toList();
    assertTrue(!names.isEmpty(), "the shared scheduler runs the governor's first tick");
    for (String n : names) {
      assertTrue(
          n.matches("sluice-background-\\d+") || n.equals("sluice-coarse-clock"),
          "a thread of its own: " + names);
    }
    assertTrue(
        names.stream().filter(n -> n.startsWith("sluice-background-")).count() <= 2,
        "two scheduler threads at most: " + names);
    g.close();
    w.close();
  }
}
