package dev.sluice;

import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Where Sluice's background work runs: reading the knobs, a governor's ticks, two-layer syncs, a
 * rules file's checks and a lost memcached node's reconnection probes. By default one {@link
 * ScheduledExecutorService} for the whole JVM, with two daemon threads that start with the first
 * task and end ten seconds after the last task left (closing a watcher cancels its task; a
 * two-layer sync ends once its limiter is garbage collected), so an undeployed web application
 * keeps none; each builder's {@code scheduler(…)} puts its work on the application's own instead.
 *
 * <p>Tasks are short: a store call is bounded by the store's operation timeout. The engine's coarse
 * clock keeps a thread of its own, since a task waiting on a dead store must not stop time.
 */
public final class Background {

  private Background() {}

  /** {@return the JVM's shared scheduler, created on first use} Do not shut it down. */
  public static ScheduledExecutorService shared() {
    return Shared.EXECUTOR;
  }

  private static final class Shared {
    static final ScheduledExecutorService EXECUTOR = create();

    private static ScheduledExecutorService create() {
      AtomicInteger threads = new AtomicInteger();
      ScheduledThreadPoolExecutor e =
          new ScheduledThreadPoolExecutor(
              2,
              r -> {
                Thread t = new Thread(r, "sluice-background-" + threads.incrementAndGet());
                t.setDaemon(true);
                // No application's class loader stays reachable from the thread.
                t.setContextClassLoader(null);
                return t;
              });
      // A stopped watcher's task leaves the queue at once rather than at its next run, and the
      // threads end once nothing is queued.
      e.setRemoveOnCancelPolicy(true);
      e.setKeepAliveTime(10, TimeUnit.SECONDS);
      e.allowCoreThreadTimeOut(true);
      return e;
    }
  }
}
