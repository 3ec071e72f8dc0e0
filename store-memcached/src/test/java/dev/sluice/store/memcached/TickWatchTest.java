package dev.sluice.store.memcached;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.store.memcached.TickWatch.Seen;
import org.junit.jupiter.api.Test;

/**
 * The watch between measurements, on host times in milliseconds: second 100 began at 1,000, so
 * second 101 is expected at 2,000; a tick more than {@link MemcachedClock#MOVED_MILLIS} (30) from
 * there, or on another second, is a moved one.
 */
class TickWatchTest {

  private final TickWatch watch = new TickWatch(10);

  TickWatchTest() {
    watch.expect(100, 1_000);
  }

  @Test
  void aTickWhereExpectedIsFollowedWithItsDrift() {
    assertEquals(1_940, watch.nextRead(1_500), "twice the bound before the tick");
    assertEquals(Seen.NOT_YET, watch.read(1_940, 100, 1_941));
    assertEquals(Seen.NOT_YET, watch.read(1_996, 100, 1_997));
    assertEquals(Seen.NEXT, watch.read(2_006, 101, 2_007));
    // Placed between the last two reads, (1,996 + 2,007) / 2: the next one expected a second on.
    assertEquals(2_941, watch.nextRead(2_100));
    assertFalse(watch.offExpected(102, 3_001));
  }

  @Test
  void aTickLaterThanTheBoundIsAMove() {
    assertEquals(Seen.NOT_YET, watch.read(1_990, 100, 1_991));
    assertEquals(Seen.MOVED, watch.read(2_031, 100, 2_032));
    assertTrue(watch.how().startsWith("late"), watch.how());
  }

  @Test
  void aTickEarlierThanTheBoundIsAMove() {
    assertEquals(Seen.MOVED, watch.read(1_940, 101, 1_941), "already ticked, 59 ms early");
    assertTrue(watch.how().startsWith("early"), watch.how());
  }

  @Test
  void aTickBetweenTwoReadsSurelyTooEarlyIsAMove() {
    assertEquals(Seen.NOT_YET, watch.read(1_940, 100, 1_941));
    assertEquals(Seen.MOVED, watch.read(1_950, 101, 1_951), "ticked by 1,951: 49 ms early");
  }

  @Test
  void aTickOnAnotherSecondIsAMove() {
    assertEquals(Seen.NOT_YET, watch.read(1_990, 100, 1_991));
    assertEquals(Seen.MOVED, watch.read(2_001, 102, 2_002), "a second skipped");
  }

  @Test
  void aReadTooLateOrTooFarFromTheLastCannotTell() {
    assertEquals(Seen.NEXT, watch.read(1_975, 101, 1_976), "no read before the tick to tell");
    TickWatch paused = new TickWatch(10);
    paused.expect(100, 1_000);
    assertEquals(Seen.NOT_YET, paused.read(1_940, 100, 1_941));
    assertEquals(Seen.NEXT, paused.read(2_900, 101, 2_901), "a pause of 960 ms between reads");
  }

  @Test
  void aMeasuredTickIsJudgedAgainstTheExpectedOnes() {
    assertFalse(watch.offExpected(105, 6_020), "five seconds on, 20 ms off");
    assertTrue(watch.offExpected(105, 6_040), "40 ms off");
    assertTrue(watch.offExpected(106, 6_000), "another second");
    assertEquals(105, watch.secondNear(6_040));
    assertEquals(40, watch.fromNearest(6_040));
  }
}
