package dev.sluice.store.memcached;

/**
 * Where {@link MemcachedClock} expects memcached's next tick, on this host's clock, and what one
 * read of the server's second between measurements says of it: not yet, as expected (or impossible
 * to tell: a read too late, or two reads a pause apart), or moved.
 *
 * <p>A memcached's tick can move while it runs, and then a fleet must not decide on two clocks for
 * long (an instance started after the move would measure the new one, the others keep the old one
 * until the next aligned tick). It moves when memcached is started again (a phase of its own, up to
 * a second from the one it had), when it is stalled (frozen, swapped out, starved of a core: its
 * timer runs late, and every later tick with it), and on its own when the drift has added up to a
 * second (every quarter of an hour or so) and memcached skips a second. So between measurements the
 * clock asks the server, from twice {@link MemcachedClock#MOVED_MILLIS} before the tick expected
 * until {@link MemcachedClock#MOVED_MILLIS} after it, every poll interval, which process it is
 * ({@code pid} and start time, from {@code stats}: {@link MemcachedClock} checks that) and what
 * second. When the process changed, or the tick comes more than {@link MemcachedClock#MOVED_MILLIS}
 * from where it was expected (or on another second), the clock measures the next tick at once,
 * provisionally, as a first one is; every instance sees the same move at the same tick, so the
 * fleet is on the new clock within about two seconds of the move (of a stall's end; an instance cut
 * off from memcached then, within about two seconds of reaching it again). A measurement's own
 * first tick is judged the same way ({@link #offExpected}), so a move while nothing watched (a
 * measurement failed in a stall and is tried again) is measured too. A smaller move, near {@link
 * MemcachedClock#MOVED_MILLIS} and within the watch's error (a poll interval), may be measured by
 * some instances and not others: until the next aligned tick instances place a boundary up to about
 * 40 ms plus memcached's drift since the last aligned tick apart.
 *
 * <p>Not thread-safe: the clock's steps use it one after another.
 */
final class TickWatch {

  /** What a read says. */
  enum Seen {
    /** The expected tick has not come yet: read again in a poll interval. */
    NOT_YET,
    /** The tick came where expected, or the read cannot tell: watch the next one. */
    NEXT,
    /** The tick moved ({@link TickWatch#how()}): measure the clock again, and restart the watch. */
    MOVED
  }

  private final long pollMillis;

  /** The tick expected next, on the host's clock, and the second it starts. */
  private long tick;

  private long second;

  /** Whether a read of the second before the expected tick was made, and when. */
  private boolean watching;

  private long watchBefore;

  /** How the last moved tick moved, for the log. */
  private String how = "";

  /**
   * @param pollMillis between two reads while a tick is awaited
   */
  TickWatch(long pollMillis) {
    this.pollMillis = pollMillis;
  }

  /** A tick seen: second {@code now} began at {@code localMillis}; the next is a second later. */
  void expect(long now, long localMillis) {
    second = now + 1;
    tick = localMillis + 1000;
  }

  /** Forgets a read under way: the next read starts watching a tick afresh. */
  void restart() {
    watching = false;
  }

  /**
   * Whether second {@code now}, begun at {@code localMillis}, is off the expected ticks: another
   * second than theirs, or more than {@link MemcachedClock#MOVED_MILLIS} from the nearest.
   */
  boolean offExpected(long now, long localMillis) {
    long seconds = seconds(localMillis);
    return now != second + seconds
        || Math.abs(localMillis - tick - seconds * 1000) > MemcachedClock.MOVED_MILLIS;
  }

  /** The second expected to begin nearest {@code localMillis}. */
  long secondNear(long localMillis) {
    return second + seconds(localMillis);
  }

  /** How far {@code localMillis} is from the nearest expected tick. */
  long fromNearest(long localMillis) {
    return localMillis - tick - seconds(localMillis) * 1000;
  }

  private long seconds(long localMillis) {
    return Math.floorDiv(localMillis - tick + 500, 1000);
  }

  /**
   * When to read for the next expected tick, at or after {@code now}: twice {@link
   * MemcachedClock#MOVED_MILLIS} before it. Ticks already past are skipped.
   */
  long nextRead(long now) {
    long lead = tick - 2 * MemcachedClock.MOVED_MILLIS;
    if (lead < now) {
      long seconds = (now - lead + 999) / 1000;
      tick += seconds * 1000;
      second += seconds;
      lead += seconds * 1000;
    }
    return lead;
  }

  /** One read: the server's second was {@code now} between host times {@code b} and {@code a}. */
  Seen read(long b, long now, long a) {
    long moved = MemcachedClock.MOVED_MILLIS;
    if (now < second && b <= tick + moved) {
      watching = true;
      watchBefore = b;
      return Seen.NOT_YET;
    } else if (now < second) {
      return moved("late, by more than " + (b - tick) + " ms");
    } else if (!watching && a >= tick - moved) {
      return Seen.NEXT; // this read came too late to tell: watch the tick after
    } else if (!watching) {
      return moved("early, by more than " + (tick - a) + " ms");
    } else if (a - watchBefore >= 1000 - 2 * moved) {
      watching = false; // the last two reads too far apart (a pause) to tell which tick it was
      return Seen.NEXT;
    } else if (now != second || a < tick - moved) {
      // Ticked between the last two reads: a second too far, or surely too early.
      return moved(
          "to second "
              + now
              + " between "
              + (watchBefore - tick)
              + " and "
              + (a - tick)
              + " ms from where expected");
    }
    watching = false;
    if (a - watchBefore <= 2 * pollMillis) {
      expect(now, (watchBefore + a) / 2); // follows memcached's drift
    }
    return Seen.NEXT;
  }

  private Seen moved(String how) {
    this.how = how;
    return Seen.MOVED;
  }

  /** How the last moved tick moved. */
  String how() {
    return how;
  }
}
