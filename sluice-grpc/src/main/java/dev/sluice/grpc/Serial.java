package dev.sluice.grpc;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs its tasks one at a time, in order, in whichever thread submitted while none ran: a call's
 * events and the decision's answer (which may come in the store's thread) never run at once, with
 * no lock held and no thread waiting.
 */
final class Serial implements Executor {

  private static final Logger LOG = LoggerFactory.getLogger(Serial.class);

  private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
  private final AtomicInteger pending = new AtomicInteger();

  @Override
  public void execute(Runnable task) {
    tasks.add(task);
    if (pending.getAndIncrement() != 0) {
      return; // the thread draining runs it
    }
    do {
      Runnable next = tasks.poll();
      try {
        next.run();
      } catch (RuntimeException | Error e) {
        // Kept draining: a task that threw must not leave the tasks behind it queued for ever.
        LOG.error("a gRPC call's task failed", e);
      }
    } while (pending.decrementAndGet() != 0);
  }
}
