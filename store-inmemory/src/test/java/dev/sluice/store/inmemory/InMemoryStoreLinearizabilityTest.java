package dev.sluice.store.inmemory;

import dev.sluice.spi.CounterUpdate;
import dev.sluice.spi.Counts;
import dev.sluice.spi.FakeClock;
import java.util.List;
import org.jetbrains.kotlinx.lincheck.LinChecker;
import org.jetbrains.kotlinx.lincheck.annotations.Operation;
import org.jetbrains.kotlinx.lincheck.annotations.Param;
import org.jetbrains.kotlinx.lincheck.paramgen.IntGen;
import org.jetbrains.kotlinx.lincheck.strategy.stress.StressOptions;
import org.junit.jupiter.api.Test;

/**
 * The in-memory store's table and counters under Lincheck: concurrent increments, decrements and
 * running-counter raises of two keys, across a window's rollover, give the results some sequential
 * order of the same calls gives: no lost update, no reader seeing a window half moved into its
 * slot, no raise losing an increment.
 *
 * <p>Windows here are at most one apart, as the threads of one clock are. An add for window {@code
 * w} racing the move of its slot to {@code w + 2} (a thread stalled a whole period between reading
 * the clock and counting) can land in {@code w + 2}: Lincheck finds it with windows 1 and 3, and
 * docs/RELIABILITY.md states it as a bound.
 */
@Param(name = "key", gen = IntGen.class, conf = "0:1")
@Param(name = "window", gen = IntGen.class, conf = "0:1")
@Param(name = "delta", gen = IntGen.class, conf = "1:3")
public class InMemoryStoreLinearizabilityTest {

  private static final long PERIOD = 1_000;

  private final InMemoryCounterStore store =
      InMemoryCounterStore.builder().clock(new FakeClock(0)).build();

  @Operation
  public String increment(
      @Param(name = "key") int key,
      @Param(name = "window") int window,
      @Param(name = "delta") int delta) {
    Counts counts =
        store.increment(List.of(new CounterUpdate("r", "k" + key, PERIOD, window, delta)));
    return counts.current(0) + "/" + counts.previous(0);
  }

  @Operation
  public void decrement(
      @Param(name = "key") int key,
      @Param(name = "window") int window,
      @Param(name = "delta") int delta) {
    store.decrement(List.of(new CounterUpdate("r", "k" + key, PERIOD, window, delta)));
  }

  @Operation
  public long raise(@Param(name = "window") int floor, @Param(name = "delta") int delta) {
    return store
        .increment(List.of(new CounterUpdate("r", "tat", PERIOD, 0, delta, 10L * (floor + 1))))
        .current(0);
  }

  @Test
  void isLinearizable() {
    LinChecker.check(
        InMemoryStoreLinearizabilityTest.class,
        new StressOptions()
            .iterations(30)
            .invocationsPerIteration(1_000)
            .threads(2)
            .actorsPerThread(3));
  }
}
