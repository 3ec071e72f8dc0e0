package dev.sluice.store.redis;

import dev.failsafe.CircuitBreaker;
import dev.sluice.spi.CounterBatch;
import dev.sluice.spi.Counts;
import dev.sluice.spi.StoreTimeoutException;
import io.lettuce.core.ScriptOutputType;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One decision's scripts: one per hash slot (one in all off a Cluster), sent together and awaited
 * together. The counters are read from the caller's batch and their counts written back into it
 * once every script has answered, with nothing copied in between. Not thread-safe: one per call.
 */
final class ScriptCall {

  private final Counting store;
  private final CounterBatch batch;

  /**
   * Whether the caller waits for the answers in its own thread ({@link #await} before the
   * deadline): a script the server does not hold is then sent again whole from there, not from a
   * stage chained to each call.
   */
  private final boolean waits;

  /** When the decision gives up ({@link System#nanoTime}): no script is sent whole after it. */
  private final long deadline;

  private final String[] names;

  /**
   * Each window counter's previous count, when this instance remembers it; {@link
   * PreviousCounts#UNKNOWN} for one the script reads; 0 for a running counter.
   */
  private final long[] known;

  /** The counters of each script, by index into the batch. */
  private List<int[]> groups;

  private List<CircuitBreaker<Object>> breakers;
  private List<String> nodes;
  CompletableFuture<?>[] futures;

  /** Each script's keys and arguments, as sent, when the caller {@link #waits}. */
  private String[][] sentKeys;

  private String[][] sentArgs;

  private boolean recorded;

  /** Whether no script reached Redis: Redis refused them unsent (not connected), safe to resend. */
  private boolean unsent;

  ScriptCall(Counting store, CounterBatch batch, boolean waits, long deadline) {
    this.store = store;
    this.batch = batch;
    this.waits = waits;
    this.deadline = deadline;
    int n = batch.size();
    this.names = new String[n];
    this.known = new long[n];
  }

  private boolean read(int i) {
    return known[i] == PreviousCounts.UNKNOWN;
  }

  void send() {
    Connection connection = store.connection;
    CounterBatch b = batch;
    int n = b.size();
    String[] current = new String[n];
    for (int i = 0; i < n; i++) {
      String name = store.keys.name(b.policy(i), b.identity(i), b.periodMillis(i));
      names[i] = name;
      long window = b.window(i);
      if (b.floor(i) > 0) {
        current[i] = store.keys.key(name, Keys.RUNNING);
      } else {
        current[i] = store.keys.key(name, window);
        known[i] = b.released(i) ? PreviousCounts.UNKNOWN : store.previous.get(name, window - 1);
      }
    }
    if (!connection.isCluster()) {
      groups = all(n);
      Health.One one = store.health.one(connection.nodeOf(0));
      nodes = one.nodes();
      breakers = one.breakers();
    } else {
      Map<Integer, List<Integer>> bySlot = new HashMap<>();
      for (int i = 0; i < n; i++) {
        bySlot.computeIfAbsent(connection.slotOf(current[i]), s -> new ArrayList<>()).add(i);
      }
      groups = new ArrayList<>(bySlot.size());
      nodes = new ArrayList<>(bySlot.size());
      breakers = new ArrayList<>(bySlot.size());
      for (List<Integer> g : bySlot.values()) {
        int[] group = g.stream().mapToInt(Integer::intValue).toArray();
        groups.add(group);
        String node = connection.nodeOf(connection.slotOf(current[group[0]]));
        nodes.add(node);
        breakers.add(store.health.breaker(node));
      }
    }
    try {
      store.health.acquire(breakers, nodes);
    } catch (StoreUnavailableException e) {
      connection.failed();
      throw e;
    }
    futures = new CompletableFuture<?>[groups.size()];
    if (waits) {
      sentKeys = new String[groups.size()][];
      sentArgs = new String[groups.size()][];
    }
    String running = store.serverTime ? "t" : "r";
    try {
      for (int gi = 0; gi < groups.size(); gi++) {
        int[] g = groups.get(gi);
        int keyCount = g.length;
        for (int i : g) {
          if (read(i)) {
            keyCount++;
          }
        }
        String[] ks = new String[keyCount];
        String[] args = new String[5 * g.length];
        int k = 0;
        for (int j = 0; j < g.length; j++) {
          int i = g[j];
          boolean read = read(i);
          ks[k++] = current[i];
          args[5 * j] = b.floor(i) > 0 ? running : read ? "w" : "c";
          if (read) {
            ks[k++] = names[i] + (b.window(i) - 1);
          }
          args[5 * j + 1] = text(b.delta(i));
          args[5 * j + 2] = ttlText(b.periodMillis(i));
          args[5 * j + 3] = text(b.floor(i));
          args[5 * j + 4] = text(b.ceiling(i));
        }
        if (waits) {
          sentKeys[gi] = ks;
          sentArgs[gi] = args;
          futures[gi] = Script.COUNT.send(connection.commands(), ScriptOutputType.MULTI, ks, args);
        } else {
          futures[gi] =
              Script.COUNT.runBefore(
                  deadline, connection.commands(), ScriptOutputType.MULTI, ks, args);
        }
      }
    } catch (RuntimeException e) {
      for (CompletableFuture<?> f : futures) {
        if (f != null) {
          f.cancel(false);
        }
      }
      failed();
      unsent = futures[0] == null;
      String message = "redis scripts could not be sent: " + e;
      // A script sent before the failure may still run: its slots are given back as a timeout's.
      throw unsent
          ? new StoreUnavailableException(message)
          : StoreUnavailableException.unconfirmed(message);
    }
  }

  /** One script for the counters 0 to n - 1 of the usual decisions (n &lt; 16), shared. */
  private static final List<List<int[]>> ALL = new ArrayList<>(16);

  static {
    for (int n = 0; n < 16; n++) {
      ALL.add(List.of(indexes(n)));
    }
  }

  /** One script for counters {@code 0} to {@code n - 1}; read only. */
  private static List<int[]> all(int n) {
    return n < ALL.size() ? ALL.get(n) : List.of(indexes(n));
  }

  private static int[] indexes(int n) {
    int[] a = new int[n];
    for (int i = 0; i < n; i++) {
      a[i] = i;
    }
    return a;
  }

  /**
   * Waits for every script until {@code deadline} and, once all have answered with a reply of the
   * expected length, writes each counter's counts into the batch ({@link CounterBatch#counted}); on
   * a failure, writes none. A script past the deadline is not cancelled: the timeout carries the
   * counts Redis answers late ({@link StoreTimeoutException#lateCounts}).
   */
  void await(long deadline) {
    RuntimeException failure = null;
    boolean allUnsent = true;
    int scripts = groups.size();
    List<?> one = null;
    List<?>[] replies = scripts == 1 ? null : new List<?>[scripts];
    for (int gi = 0; gi < scripts; gi++) {
      try {
        List<?> reply = reply(gi, deadline, failure == null);
        if (reply.size() != 2 * groups.get(gi).length) {
          // The script ran: what it wrote stands.
          throw StoreUnavailableException.unconfirmed(
              "redis answered "
                  + reply.size()
                  + " values for "
                  + groups.get(gi).length
                  + " counters");
        }
        allUnsent = false;
        if (replies == null) {
          one = reply;
        } else {
          replies[gi] = reply;
        }
        store.health.succeeded(breakers.get(gi));
      } catch (RuntimeException e) {
        allUnsent &= notConnected(futures[gi]);
        store.health.failed(breakers.get(gi));
        store.connection.failed();
        if (failure == null || !StoreTimeoutException.in(failure)) {
          // An unconfirmed failure wins: another script of the call may have run.
          failure = e;
        }
      }
    }
    recorded = true;
    if (failure != null) {
      unsent = allUnsent;
      if (allUnsent) {
        // Refused unsent (not connected): nothing was applied, and no slot is to be given back.
        throw new StoreUnavailableException(failure.getMessage());
      }
      throw StoreTimeoutException.in(failure)
          ? StoreUnavailableException.unconfirmed(failure.getMessage(), late())
          : failure;
    }
    store.previous.makeRoom(batch.size());
    for (int gi = 0; gi < scripts; gi++) {
      List<?> reply = replies == null ? one : replies[gi];
      int[] g = groups.get(gi);
      for (int j = 0; j < g.length; j++) {
        int i = g[j];
        long current = number(reply.get(2 * j));
        long previous = known[i];
        if (previous == PreviousCounts.UNKNOWN) {
          previous = number(reply.get(2 * j + 1));
          if (!batch.released(i)) {
            store.previous.put(names[i], batch.window(i) - 1, previous);
          }
        }
        batch.counted(i, current, previous);
      }
    }
  }

  /**
   * The counts Redis answers after the deadline, once every script has: each counter's new count,
   * and its previous count as this instance knew it or the script read it. Fails when a script
   * failed or answered a reply of another length, or has not answered within {@link
   * Counting#lateNanos}. Reads nothing of the batch, which its caller reuses; the previous counts
   * read late are not remembered.
   */
  private CompletableFuture<Counts> late() {
    CompletableFuture<?>[] sent = futures.clone();
    List<int[]> g = groups;
    long[] previous = known.clone();
    return CompletableFuture.allOf(sent)
        .thenApply(
            v -> {
              long[] out = new long[2 * previous.length];
              for (int gi = 0; gi < sent.length; gi++) {
                List<?> reply = (List<?>) sent[gi].join();
                int[] group = g.get(gi);
                if (reply == null || reply.size() != 2 * group.length) {
                  throw new IllegalStateException("redis answered a reply of another length");
                }
                for (int j = 0; j < group.length; j++) {
                  int i = group[j];
                  out[2 * i] = number(reply.get(2 * j));
                  out[2 * i + 1] =
                      previous[i] == PreviousCounts.UNKNOWN
                          ? number(reply.get(2 * j + 1))
                          : previous[i];
                }
              }
              return Counts.of(out);
            })
        .orTimeout(store.lateNanos, TimeUnit.NANOSECONDS);
  }

  /**
   * Whether the call failed with nothing sent to Redis (the connection was not open yet), so
   * sending it again cannot count it twice.
   */
  boolean unsent() {
    return unsent;
  }

  /** Answers every breaker whose permit was taken and not yet answered. */
  void failed() {
    if (!recorded) {
      recorded = true;
      breakers.forEach(store.health::failed);
    }
  }

  /** Lettuce refused the command at once: its connection was not open (never written). */
  private static boolean notConnected(CompletableFuture<?> f) {
    if (!f.isCompletedExceptionally()) {
      return false;
    }
    try {
      f.getNow(null);
      return false;
    } catch (CompletionException | java.util.concurrent.CancellationException e) {
      Throwable t = e.getCause();
      return t != null
          && !(t instanceof io.lettuce.core.RedisCommandTimeoutException)
          && String.valueOf(t.getMessage()).contains("not connected");
    }
  }

  /**
   * Script {@code gi}'s answer, waiting until the deadline; sent again whole to a server that
   * answers {@code NOSCRIPT} when the caller {@link #waits} (otherwise {@link Script#runBefore}
   * did), unless the decision has failed already ({@code !resend}) or its deadline has passed: a
   * script sent then would count a decision reported as failed.
   */
  private List<?> reply(int gi, long deadline, boolean resend) {
    if (waits) {
      CompletableFuture<?> f = futures[gi];
      try {
        long wait = deadline - System.nanoTime();
        f.get(Math.max(0, wait), TimeUnit.NANOSECONDS);
      } catch (ExecutionException e) {
        if (resend && Script.noScript(e.getCause()) && deadline - System.nanoTime() > 0) {
          futures[gi] =
              Script.COUNT.eval(
                  store.connection.commands(), ScriptOutputType.MULTI, sentKeys[gi], sentArgs[gi]);
        }
      } catch (TimeoutException | InterruptedException e) {
        // answered below, as any other failure
        if (e instanceof InterruptedException) {
          Thread.currentThread().interrupt();
        }
      }
    }
    return get(futures[gi], deadline);
  }

  private static List<?> get(CompletableFuture<?> f, long deadline) {
    try {
      long wait = deadline - System.nanoTime();
      Object r = wait > 0 || f.isDone() ? f.get(Math.max(0, wait), TimeUnit.NANOSECONDS) : null;
      if (r == null) {
        throw new TimeoutException();
      }
      return (List<?>) r;
    } catch (TimeoutException e) {
      throw StoreUnavailableException.unconfirmed(
          "redis did not answer within the operation timeout");
    } catch (ExecutionException | CompletionException e) {
      Throwable cause = e.getCause() == null ? e : e.getCause();
      throw StoreUnavailableException.unconfirmed("redis failed: " + cause);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw StoreUnavailableException.unconfirmed("interrupted while waiting for redis");
    }
  }

  private static long number(Object o) {
    if (o instanceof Long l) {
      return l;
    }
    return Long.parseLong(o.toString());
  }

  /** Decimal texts of 0 to 1,023, the usual deltas and floors. */
  private static final String[] SMALL = new String[1024];

  static {
    for (int i = 0; i < SMALL.length; i++) {
      SMALL[i] = Integer.toString(i);
    }
  }

  private static final String MAX = Long.toString(Long.MAX_VALUE);

  /** A window length and the decimal text of its time to live; immutable. */
  private record Ttl(long periodMillis, String text) {}

  private static final int TTL_SLOTS_LOG2 = 5;

  /** The time-to-live texts of recent window lengths; read without a lock, whole or not at all. */
  private static final Ttl[] TTLS = new Ttl[1 << TTL_SLOTS_LOG2];

  /** {@link Keys#ttlMillis} of a window length, in decimal. */
  static String ttlText(long periodMillis) {
    int slot = (Long.hashCode(periodMillis) * 0x9E3779B9) >>> (32 - TTL_SLOTS_LOG2);
    Ttl t = TTLS[slot];
    if (t != null && t.periodMillis() == periodMillis) {
      return t.text();
    }
    String text = text(Keys.ttlMillis(periodMillis));
    TTLS[slot] = new Ttl(periodMillis, text);
    return text;
  }

  /**
   * {@code v} in decimal, without a new string for the values most arguments take: small deltas and
   * floors, and no ceiling ({@link Long#MAX_VALUE}).
   */
  static String text(long v) {
    if (v >= 0 && v < SMALL.length) {
      return SMALL[(int) v];
    }
    return v == Long.MAX_VALUE ? MAX : Long.toString(v);
  }
}
