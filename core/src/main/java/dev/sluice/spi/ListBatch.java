package dev.sluice.spi;

import java.util.List;

/** {@link CounterBatch#of}: a list of updates by index, its counts written into an array. */
final class ListBatch implements CounterBatch {

  private final List<CounterUpdate> updates;
  private final long[] counts;

  ListBatch(List<CounterUpdate> updates, long[] counts) {
    this.updates = updates;
    this.counts = counts;
  }

  @Override
  public int size() {
    return updates.size();
  }

  @Override
  public String policy(int i) {
    return updates.get(i).policy();
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
    counts[2 * i] = current;
    counts[2 * i + 1] = previous;
  }

  @Override
  public List<CounterUpdate> updates() {
    return updates;
  }

  @Override
  public CounterUpdate update(int i) {
    return updates.get(i);
  }
}
