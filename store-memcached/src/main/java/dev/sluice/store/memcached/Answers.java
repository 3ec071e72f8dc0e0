package dev.sluice.store.memcached;

import java.util.List;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import net.spy.memcached.internal.BulkGetCompletionListener;
import net.spy.memcached.internal.GetCompletionListener;
import net.spy.memcached.internal.GetFuture;
import net.spy.memcached.internal.OperationCompletionListener;
import net.spy.memcached.internal.OperationFuture;

/**
 * Waits for spymemcached's answers without a thread parked on them: a listener on each future, and
 * the last one to complete runs what comes next, in spymemcached's listener thread (its executor,
 * never its I/O thread).
 */
final class Answers {

  private Answers() {}

  /**
   * Runs {@code then} once every one of {@code futures} has completed (answered, failed or been
   * cancelled); at once, in the calling thread, when there is none.
   *
   * @throws IllegalArgumentException for a future spymemcached cannot tell about its completion
   */
  static void whenAll(List<Future<?>> futures, Runnable then) {
    if (futures.isEmpty()) {
      then.run();
      return;
    }
    AtomicInteger left = new AtomicInteger(futures.size());
    Runnable one =
        () -> {
          if (left.decrementAndGet() == 0) {
            then.run();
          }
        };
    for (Future<?> f : futures) {
      onDone(f, one);
    }
  }

  private static void onDone(Future<?> f, Runnable done) {
    if (f instanceof OperationFuture<?> op) {
      var unused = op.addListener((OperationCompletionListener) answered -> done.run());
    } else if (f instanceof GetFuture<?> get) {
      var unused = get.addListener((GetCompletionListener) answered -> done.run());
    } else if (f instanceof OneOfBulk bulk) {
      var unused = bulk.bulk().addListener((BulkGetCompletionListener) answered -> done.run());
    } else if (f instanceof java.util.concurrent.CompletableFuture<?> move) {
      // A token bucket's move (RunningLines), completed by its line's read-modify-write.
      var unused = move.whenComplete((v, e) -> done.run());
    } else {
      throw new IllegalArgumentException("no completion listener for " + f.getClass().getName());
    }
  }
}
