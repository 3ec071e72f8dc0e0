package dev.sluice.engine;

import dev.sluice.spi.CounterKey;
import java.util.ArrayList;
import java.util.List;

/**
 * A call with the pushes of {@link LastCounts}: each counter's increment plus what it owes, and
 * pushes to previous windows as extra counters, whose answers are dropped.
 */
final class Pushes implements TwoLayerBatch {
  private final LastCounts owner;
  private final Call call;
  private final long[] added;
  private final List<long[]> extras = new ArrayList<>(1);
  private final List<Runnable> undo = new ArrayList<>(2);

  /** For a running counter's push, how to owe it again when the store writes nothing. */
  private final Runnable[] undoRunning;

  Pushes(LastCounts owner, Call call) {
    this.owner = owner;
    this.call = call;
    this.added = new long[call.size()];
    this.undoRunning = new Runnable[call.size()];
  }

  void add(int i, long push, LastCounts.Memo m, long owed, boolean running) {
    added[i] = LastCounts.saturatedSum(added[i], push);
    long window = call.window(i);
    Runnable back = () -> owner.putBack(m, window, owed, false, running);
    undo.add(back);
    if (running) {
      undoRunning[i] = back;
      if (ceilings == null) {
        ceilings = new long[added.length];
      }
      ceilings[i] = call.ceiling(i);
    }
  }

  /** Each running counter's ceiling, as sent with its push; null without such a push. */
  private long[] ceilings;

  /**
   * The failed call was answered late ({@code counts}, by index): its pushes were written, but a
   * running counter's past its ceiling, which is owed again. Reads nothing of the call, which has
   * been reused since.
   */
  void answeredLate(dev.sluice.spi.Counts counts) {
    for (int i = 0; i < undoRunning.length; i++) {
      if (undoRunning[i] != null && counts.current(i) > ceilings[i]) {
        undoRunning[i].run();
        undoRunning[i] = null;
      }
    }
  }

  void extra(int i, long window, long push, LastCounts.Memo m) {
    extras.add(new long[] {i, window, push});
    undo.add(() -> owner.putBack(m, window, push, true, false));
  }

  /** Puts every push back into its debt: the call failed. */
  void failed() {
    undo.forEach(Runnable::run);
  }

  /** How much was pushed in all, for tests. */
  long total() {
    long t = 0;
    for (long a : added) {
      t += a;
    }
    for (long[] e : extras) {
      t += e[2];
    }
    return t;
  }

  private int base(int i) {
    return i < added.length ? i : (int) extras.get(i - added.length)[0];
  }

  @Override
  public int size() {
    return added.length + extras.size();
  }

  @Override
  public String policy(int i) {
    return call.policy(base(i));
  }

  @Override
  public String identity(int i) {
    return call.identity(base(i));
  }

  @Override
  public long periodMillis(int i) {
    return call.periodMillis(base(i));
  }

  @Override
  public CounterKey key(int i) {
    return i < added.length
        ? call.key(i)
        : new CounterKey().set(policy(i), identity(i), periodMillis(i));
  }

  @Override
  public long window(int i) {
    return i < added.length ? call.window(i) : extras.get(i - added.length)[1];
  }

  @Override
  public long delta(int i) {
    return i < added.length
        ? LastCounts.saturatedSum(call.delta(i), added[i])
        : extras.get(i - added.length)[2];
  }

  @Override
  public long floor(int i) {
    return i < added.length ? call.floor(i) : 0;
  }

  @Override
  public long ceiling(int i) {
    return i < added.length ? call.ceiling(i) : Long.MAX_VALUE;
  }

  @Override
  public boolean released(int i) {
    return i < added.length && call.released(i);
  }

  @Override
  public long syncMillis(int i) {
    return i < added.length ? call.syncMillis(i) : 0;
  }

  @Override
  public long localAllowance(int i) {
    return i < added.length ? call.localAllowance(i) : Long.MAX_VALUE;
  }

  /**
   * A running counter past its ceiling was not written, its push with it: the push is owed again
   * (the request is refused against the same sum the store tested).
   */
  @Override
  public void counted(int i, long current, long previous) {
    if (i < added.length) {
      if (undoRunning[i] != null && current > call.ceiling(i)) {
        undoRunning[i].run();
        undoRunning[i] = null;
      }
      call.counted(i, current, previous);
    }
  }
}
