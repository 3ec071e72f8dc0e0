package dev.sluice.engine;

import org.jetbrains.kotlinx.lincheck.LinChecker;
import org.jetbrains.kotlinx.lincheck.annotations.Operation;
import org.jetbrains.kotlinx.lincheck.annotations.Param;
import org.jetbrains.kotlinx.lincheck.paramgen.IntGen;
import org.jetbrains.kotlinx.lincheck.strategy.stress.StressOptions;
import org.junit.jupiter.api.Test;

/**
 * {@link DenyCache} under Lincheck: concurrent puts and gets of a few identities, in a cache small
 * enough that puts evict and the table is rebuilt, give results some sequential order of the same
 * calls gives. A put never loses a later denial to an earlier one, and a get never sees a
 * half-moved slot.
 */
@Param(name = "who", gen = IntGen.class, conf = "0:4")
@Param(name = "until", gen = IntGen.class, conf = "1:3")
public class DenyCacheLinearizabilityTest {

  private static final long NOW = 1_000;

  private final DenyCache cache = new DenyCache(3);

  @Operation
  public void put(@Param(name = "who") int who, @Param(name = "until") int until) {
    cache.put(new DenyCache.Denial("id" + who, NOW + until, 0, until, NOW + until), NOW);
  }

  @Operation
  public long get(@Param(name = "who") int who) {
    DenyCache.Denial d = cache.get("id" + who, NOW);
    return d == null ? -1 : d.untilMillis();
  }

  @Test
  void isLinearizable() {
    LinChecker.check(
        DenyCacheLinearizabilityTest.class,
        new StressOptions()
            .iterations(40)
            .invocationsPerIteration(2_000)
            .threads(2)
            .actorsPerThread(3));
  }
}
