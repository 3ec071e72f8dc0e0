package dev.sluice.store.redis;

import dev.failsafe.CircuitBreaker;
import dev.sluice.spi.CounterUpdate;
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
 * together. Not thread-safe: one per call.
 */
final class ScriptCall {

  private final Counting store;
  private final List<CounterUpdate> updates;
  private final String[] names;
  private final long[] known;
  private final boolean[] read;

  /** The counters of each script, by index into {@code updates}. */
  private final List<int[]> groups = new ArrayList<>(1);

  private final List<CircuitBreaker<Object>> breakers = new ArrayList<>(1);
  private final List<String> nodes = new ArrayList<>(1);
  CompletableFuture<?>[] futures;
  private boolean recorded;

  /** Whether no script reached Redis: Redis refused them unsent (not connected), safe to resend. */
  private boolean unsent;

  ScriptCall(Counting store, List<CounterUpdate> updates) {
    this.store = store;
    this.updates = updates;
    int n = updates.size();
    this.names = new String[n];
    this.known = new long[n];
    this.read = new boolean[n];
  }

  void send() {
    Connection connection = store.connection;
    int n = updates.size();
    String[] current = new String[n];
    for (int i = 0; i < n; i++) {
      CounterUpdate u = updates.get(i);
      String name = store.keys.name(u);
      names[i] = name;
      current[i] = u.running() ? name + "tat" : name + u.window();
      if (!u.running()) {
        long cached =
            u.released() ? PreviousCounts.UNKNOWN : store.previous.get(name, u.window() - 1);
        if (cached == PreviousCounts.UNKNOWN) {
          read[i] = true;
        } else {
          known[i] = cached;
        }
      }
    }
    if (!connection.isCluster()) {
      int[] all = new int[n];
      for (int i = 0; i < n; i++) {
        all[i] = i;
      }
      groups.add(all);
    } else {
      Map<Integer, List<Integer>> bySlot = new HashMap<>();
      for (int i = 0; i < n; i++) {
        bySlot.computeIfAbsent(connection.slotOf(current[i]), s -> new ArrayList<>()).add(i);
      }
      for (List<Integer> g : bySlot.values()) {
        groups.add(g.stream().mapToInt(Integer::intValue).toArray());
      }
    }
    for (int[] g : groups) {
      String node = connection.nodeOf(connection.slotOf(current[g[0]]));
      nodes.add(node);
      breakers.add(store.health.breaker(node));
    }
    try {
      store.health.acquire(breakers, nodes);
    } catch (StoreUnavailableException e) {
      connection.failed();
      throw e;
    }
    futures = new CompletableFuture<?>[groups.size()];
    String running = store.serverTime ? "t" : "r";
    try {
      for (int gi = 0; gi < groups.size(); gi++) {
        int[] g = groups.get(gi);
        int keyCount = g.length;
        for (int i : g) {
          if (read[i]) {
            keyCount++;
          }
        }
        String[] ks = new String[keyCount];
        String[] args = new String[5 * g.length];
        int k = 0;
        for (int j = 0; j < g.length; j++) {
          int i = g[j];
          CounterUpdate u = updates.get(i);
          ks[k++] = current[i];
          args[5 * j] = u.running() ? running : read[i] ? "w" : "c";
          if (read[i]) {
            ks[k++] = names[i] + (u.window() - 1);
          }
          args[5 * j + 1] = text(u.delta());
          args[5 * j + 2] = text(RedisCounterStore.ttlMillis(u.periodMillis()));
          args[5 * j + 3] = text(u.floor());
          args[5 * j + 4] = text(u.ceiling());
        }
        futures[gi] = Script.COUNT.run(connection.commands(), ScriptOutputType.MULTI, ks, args);
      }
    } catch (RuntimeException e) {
      for (CompletableFuture<?> f : futures) {
        if (f != null) {
          f.cancel(false);
        }
      }
      failed();
      unsent = futures[0] == null;
      throw new StoreUnavailableException("redis scripts could not be sent: " + e);
    }
  }

  long[] await(long deadline) {
    long[] out = new long[2 * updates.size()];
    RuntimeException failure = null;
    boolean allUnsent = true;
    store.previous.makeRoom(updates.size());
    for (int gi = 0; gi < groups.size(); gi++) {
      try {
        List<?> reply = get(futures[gi], deadline);
        allUnsent = false;
        int[] g = groups.get(gi);
        for (int j = 0; j < g.length; j++) {
          int i = g[j];
          out[2 * i] = number(reply.get(2 * j));
          if (read[i]) {
            long p = number(reply.get(2 * j + 1));
            out[2 * i + 1] = p;
            if (!updates.get(i).released()) {
              store.previous.put(names[i], updates.get(i).window() - 1, p);
            }
          } else {
            out[2 * i + 1] = known[i];
          }
        }
        store.health.succeeded(breakers.get(gi));
      } catch (RuntimeException e) {
        allUnsent &= notConnected(futures[gi]);
        store.health.failed(breakers.get(gi));
        store.connection.failed();
        failure = e;
      }
    }
    recorded = true;
    if (failure != null) {
      unsent = allUnsent;
      throw failure;
    }
    return out;
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
