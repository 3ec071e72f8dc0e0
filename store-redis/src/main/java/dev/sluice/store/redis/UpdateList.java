package dev.sluice.store.redis;

import dev.sluice.spi.CounterBatch;
import dev.sluice.spi.CounterUpdate;
import dev.sluice.spi.Counts;
import java.util.List;

/** A list of updates as a batch, its counts kept for {@link #counts()}. Not thread-safe. */
final class UpdateList implements CounterBatch {

  private final List<CounterUpdate> updates;
  private final long[] pairs;

  UpdateList(List<CounterUpdate> updates) {
    this.updates = updates;
    this.pairs = new long[2 * updates.size()];
  }

  @Override
  public int size() {
    return updates.size();
  }

  @Override
  public String rule(int i) {
    return updates.get(i).rule();
  }

  @Override
  public String identity(int i) {
    return updates.get(i).identity();
  }

  @Override
  public long periodMillis(int i) {
    return updates.get(i).periodMillis();
  }

  @Override
  public long window(int i) {
    return updates.get(i).window();
  }

  @Override
  public long delta(int i) {
    return updates.get(i).delta();
  }

  @Override
  public long floor(int i) {
    return updates.get(i).floor();
  }

  @Override
  public long ceiling(int i) {
    return updates.get(i).ceiling();
  }

  @Override
  public boolean released(int i) {
    return updates.get(i).released();
  }

  @Override
  public void counted(int i, long current, long previous) {
    pairs[2 * i] = current;
    pairs[2 * i + 1] = previous;
  }

  @Override
  public List<CounterUpdate> updates() {
    return updates;
  }

  /** The counts written so far, as the store answers them. */
  Counts counts() {
    return Counts.of(pairs);
  }
}
