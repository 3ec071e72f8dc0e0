package dev.sluice.store.memcached;

import dev.sluice.spi.CounterUpdate;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import net.spy.memcached.CASResponse;
import net.spy.memcached.CASValue;
import net.spy.memcached.internal.OperationFuture;

/**
 * Running counters (a token bucket's theoretical arrival time) moved by compare-and-set, with their
 * ceiling ({@link dev.sluice.spi.CounterBatch#ceiling}): exact across instances, since memcached
 * writes a value only if nothing else wrote the key since it was read.
 *
 * <p>Each counter this instance moves has a line. The requests that arrive for it while a round is
 * in flight wait for the next one, and the next round decides them together in their order of
 * arrival ({@code v = max(value, floor) + delta}, kept when {@code v <= ceiling}) and writes the
 * result once: one read-modify-write for any number of local requests, so contention between
 * threads of one instance costs no retries. A line remembers the value and CAS id of its last read
 * or write (binary memcached returns the new CAS id with a write): while no other instance wrote
 * the key, a round is one compare-and-set, one round trip. When another instance did, the
 * compare-and-set fails and the round reads the key again and retries; after a failure a line sends
 * the read behind its next compare-and-set, in the same round trip, so a contended key costs two
 * round trips, not three. A refusal is never decided on a remembered value: it is confirmed by a
 * read. A key memcached does not hold is created with {@code add}. Every write renews the key's
 * expiry.
 *
 * <p>A round gives up after {@value #MAX_ROUNDS} failed compare-and-sets (the requests fail as on a
 * store failure; none of them was written), or when one of its operations fails; its requests'
 * callers time out on their own deadline, and a request that timed out stays in its line: it is
 * written when memcached answers, and its value reported to the caller's late answer, as a late
 * {@code incr}'s is. A round still in flight after {@code stuckNanos} (twice the longest a decision
 * waits: memcached took the operations and never answered) is abandoned by the next request.
 * Thread-safe; each line is guarded by its monitor, and rounds continue on spymemcached's listener
 * threads.
 */
final class RunningLines {

  /** The most compare-and-sets one round sends before its requests fail. */
  static final int MAX_ROUNDS = 64;

  private final Counting counting;
  private final int capacity;
  private final long stuckNanos;
  private final ConcurrentHashMap<String, Line> lines = new ConcurrentHashMap<>();

  /** Compare-and-sets (and adds) sent, and those another writer won; for tests and benchmarks. */
  final java.util.concurrent.atomic.LongAdder writesSent =
      new java.util.concurrent.atomic.LongAdder();

  final java.util.concurrent.atomic.LongAdder writesLost =
      new java.util.concurrent.atomic.LongAdder();

  /** Reads sent (a line that knew nothing, a refusal confirmed, a write lost). */
  final java.util.concurrent.atomic.LongAdder readsSent =
      new java.util.concurrent.atomic.LongAdder();

  RunningLines(Counting counting, int capacity, long stuckNanos) {
    this.counting = counting;
    this.capacity = capacity;
    this.stuckNanos = stuckNanos;
  }

  /** One request's move on a line; completed with the value it reports, or a failure. */
  static final class Move extends CompletableFuture<Long> {
    final long delta;
    final long floor;
    final long ceiling;

    Move(CounterUpdate u) {
      this.delta = u.delta();
      this.floor = u.floor();
      this.ceiling = u.ceiling();
    }
  }

  /**
   * Queues {@code u} on running counter {@code key}'s line; its round may be sent from this call.
   */
  Move join(String key, CounterUpdate u) {
    Move m = new Move(u);
    Line line = lines.get(key);
    if (line == null) {
      if (lines.size() >= capacity) {
        lines.values().removeIf(Line::idle);
      }
      line = lines.computeIfAbsent(key, k -> new Line(k, u.periodMillis()));
    }
    line.offer(m);
    return m;
  }

  /** Forgets what this instance knows of {@code key}'s value: another change is on its way. */
  void changed(String key) {
    Line line = lines.get(key);
    if (line != null) {
      line.forget();
    }
  }

  /** How many lines are kept; for tests. */
  int size() {
    return lines.size();
  }

  private static long sum(long a, long b) {
    long s = a + b;
    return ((a ^ s) & (b ^ s)) < 0 ? Long.MAX_VALUE : s;
  }

  /** One running counter as this instance moves it. */
  private final class Line {
    private final String key;
    private final long periodMillis;

    // Guarded by this.
    private final ArrayDeque<Move> pending = new ArrayDeque<>();
    private List<Move> round;
    private long roundStarted;
    private int attempts;
    private int generation;

    /** Whether {@link #present}, {@link #value} and {@link #cas} are a state memcached held. */
    private boolean known;

    /** Whether that state was read during the current round (a refusal may rest on it). */
    private boolean fresh;

    private boolean present;
    private long value;
    private long cas;

    /** Whether the last compare-and-set failed: the next one sends a read behind it. */
    private boolean contended;

    Line(String key, long periodMillis) {
      this.key = key;
      this.periodMillis = periodMillis;
    }

    synchronized boolean idle() {
      return round == null && pending.isEmpty();
    }

    synchronized void forget() {
      known = false;
    }

    synchronized void offer(Move m) {
      pending.add(m);
      if (round == null) {
        start();
      } else if (System.nanoTime() - roundStarted >= stuckNanos) {
        // Failing the stuck round starts the next one, with this request.
        known = false;
        fail(StoreUnavailableException.unconfirmed("memcached did not answer in time"));
      }
    }

    /** Starts a round with every pending request that still waits, if any. */
    private void start() {
      List<Move> next = new ArrayList<>(pending.size());
      for (Move m; (m = pending.poll()) != null; ) {
        if (!m.isDone()) {
          next.add(m);
        }
      }
      if (next.isEmpty()) {
        round = null;
        return;
      }
      round = next;
      roundStarted = System.nanoTime();
      attempts = 0;
      fresh = false;
      generation++;
      attempt();
    }

    /** Sends the round's next operation: a read, or the write of what its requests make. */
    private void attempt() {
      round.removeIf(Move::isDone);
      if (round.isEmpty()) {
        start();
        return;
      }
      int gen = generation;
      try {
        if (!known) {
          read(gen);
          return;
        }
        long s = present ? value : 0;
        long[] results = new long[round.size()];
        boolean moved = false;
        for (int j = 0; j < results.length; j++) {
          Move m = round.get(j);
          long v = sum(Math.max(s, m.floor), m.delta);
          results[j] = v;
          if (v <= m.ceiling) {
            s = v;
            moved = true;
          }
        }
        if (!moved) {
          if (fresh) {
            finish(results);
          } else {
            read(gen);
          }
          return;
        }
        long target = s;
        writesSent.increment();
        int expiry = counting.expiry(periodMillis);
        OperationFuture<?> write =
            present
                ? counting.client().asyncCAS(key, cas, expiry, Long.toString(target))
                : counting.client().add(key, expiry, Long.toString(target));
        OperationFuture<CASValue<Object>> reread = null;
        if (contended) {
          readsSent.increment();
          reread = counting.client().asyncGets(key);
        }
        OperationFuture<CASValue<Object>> behind = reread;
        var unused = write.addListener(f -> written(gen, write, behind, target, results));
      } catch (RuntimeException e) {
        // Not sent (a full queue, a client shutting down): nothing was written.
        known = false;
        fail(new StoreUnavailableException("memcached operations could not be sent: " + e));
      }
    }

    private void read(int gen) {
      readsSent.increment();
      OperationFuture<CASValue<Object>> gets = counting.client().asyncGets(key);
      var unused = gets.addListener(f -> read(gen, gets));
    }

    private synchronized void read(int gen, OperationFuture<CASValue<Object>> gets) {
      if (gen != generation || round == null) {
        return;
      }
      try {
        see(gets.get());
      } catch (Exception e) {
        known = false;
        fail(StoreUnavailableException.unconfirmed("memcached failed: " + e));
        return;
      }
      if (!Replies.succeededOrMissing(gets)) {
        known = false;
        fail(StoreUnavailableException.unconfirmed("memcached failed: " + gets.getStatus()));
        return;
      }
      attempt();
    }

    /** Takes a read's answer as the state memcached holds. */
    private void see(CASValue<Object> seen) {
      known = true;
      fresh = true;
      present = seen != null;
      if (present) {
        value = Replies.parse(seen.getValue());
        cas = seen.getCas();
      }
    }

    private synchronized void written(
        int gen,
        OperationFuture<?> write,
        OperationFuture<CASValue<Object>> reread,
        long target,
        long[] results) {
      if (gen != generation || round == null) {
        return;
      }
      Object answer;
      try {
        answer = write.get();
      } catch (Exception e) {
        known = false;
        fail(StoreUnavailableException.unconfirmed("memcached failed: " + e));
        return;
      }
      if (answer == CASResponse.OK || Boolean.TRUE.equals(answer)) {
        if (attempts == 0) {
          contended = false;
        }
        Long newCas = write.getCas();
        known = newCas != null && newCas != 0;
        present = true;
        value = target;
        cas = known ? newCas : 0;
        finish(results);
        return;
      }
      boolean lost =
          answer == CASResponse.EXISTS
              || answer == CASResponse.NOT_FOUND
              || Boolean.FALSE.equals(answer);
      if (!lost) {
        known = false;
        fail(StoreUnavailableException.unconfirmed("memcached failed: " + write.getStatus()));
        return;
      }
      contended = true;
      known = false;
      writesLost.increment();
      if (++attempts >= MAX_ROUNDS) {
        fail(
            new StoreUnavailableException(
                "running counter " + key + " contended: " + attempts + " compare-and-sets lost"));
        return;
      }
      if (reread != null) {
        var unused = reread.addListener(f -> read(gen, reread));
      } else {
        attempt();
      }
    }

    /** Answers the round's requests and starts the next round. */
    private void finish(long[] results) {
      for (int j = 0; j < results.length; j++) {
        round.get(j).complete(results[j]);
      }
      round = null;
      start();
    }

    /** Fails the round's requests, and starts the next round. */
    private void fail(RuntimeException e) {
      for (Move m : round) {
        m.completeExceptionally(e);
      }
      round = null;
      generation++;
      start();
    }
  }
}
