package dev.sluice.store.memcached;

import java.util.List;
import java.util.concurrent.Future;
import net.spy.memcached.internal.BulkGetCompletionListener;
import net.spy.memcached.internal.GetCompletionListener;
import net.spy.memcached.internal.GetFuture;
import net.spy.memcached.internal.OperationCompletionListener;
import net.spy.memcached.internal.OperationFuture;

/**
 * Waits for spymemcached's answers without a thread parked on them: a listener on the last future
 * still pending, and what comes next runs once none is, in spymemcached's listener thread (its
 * executor, never its I/O thread).
 */
final class Answers {

  private Answers() {}

  /**
   * Runs {@code then} once every one of {@code futures} has completed (answered, failed or been
   * cancelled); at once, in the calling thread, when there is none.
   *
   * <p>A node answers its operations in the order they were sent, so the last one sent is, nearly
   * always, the last one to complete: one listener waits for it, and when it fires the others are
   * found done. One still pending then gets the next listener. A batch of many counters costs one
   * hand-off to the listener thread per node rather than one per operation.
   *
   * @throws IllegalArgumentException for a future spymemcached cannot tell about its completion
   */
  static void whenAll(List<Future<?>> futures, Runnable then) {
    if (futures.isEmpty()) {
      then.run();
      return;
    }
    // The first listener goes on the last of spymemcached's futures, even one already answered:
    // spymemcached calls it on its listener thread, so what follows does not run in the caller's
    // thread (an event loop's) unless every future is a move.
    int last = -1;
    for (int i = futures.size() - 1; i >= 0; i--) {
      Future<?> f = futures.get(i);
      if (!(f instanceof OperationFuture
          || f instanceof GetFuture
          || f instanceof OneOfBulk
          || f instanceof java.util.concurrent.CompletableFuture)) {
        throw new IllegalArgumentException("no completion listener for " + f.getClass().getName());
      }
      if (last < 0 && !(f instanceof java.util.concurrent.CompletableFuture)) {
        last = i;
      }
    }
    last = last < 0 ? futures.size() - 1 : last;
    onDone(futures.get(last), () -> whenAllBefore(futures, futures.size(), then));
  }

  /** {@link #whenAll} for the futures before index {@code end}. */
  private static void whenAllBefore(List<Future<?>> futures, int end, Runnable then) {
    int i = end - 1;
    while (i >= 0 && futures.get(i).isDone()) {
      i--;
    }
    if (i < 0) {
      then.run();
      return;
    }
    int pending = i;
    onDone(futures.get(pending), () -> whenAllBefore(futures, pending, then));
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
      throw new IllegalStateException("checked by whenAll: " + f.getClass().getName());
    }
  }
}
