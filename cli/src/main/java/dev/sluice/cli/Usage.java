package dev.sluice.cli;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.PriorityQueue;
import java.util.TreeMap;

/**
 * Counts each client's requests per period, periods aligned as the fixed window aligns them (on
 * multiples of the period since the epoch), and keeps two distributions: each client's peak count
 * in any period, and the count of every user-period (a client and a period in which it made at
 * least one request).
 *
 * <p>Memory grows with the number of clients, not with the size of the logs: a client keeps the
 * counts of its newest {@value #OPEN} periods only. A line up to {@value #OPEN} periods older than
 * its client's newest is still counted exactly; an older one is counted as out of order and left
 * out (the report says how many). Feed files in the order they were written.
 */
final class Usage {

  static final int OPEN = 4;

  private final long periodMillis;
  private final Map<String, Client> clients = new HashMap<>();
  private final Frequencies peaks = new Frequencies();
  private final Frequencies userPeriods = new Frequencies();
  private boolean closed;
  long outOfOrder;

  Usage(long periodMillis) {
    this.periodMillis = periodMillis;
  }

  private static final class Client {
    long newest = Long.MIN_VALUE;
    final int[] counts = new int[OPEN];
    int peak;
  }

  void request(long epochMillis, String client) {
    long p = Math.floorDiv(epochMillis, periodMillis);
    Client c = clients.computeIfAbsent(client, k -> new Client());
    if (c.newest == Long.MIN_VALUE) {
      c.newest = p;
    } else if (p > c.newest) {
      for (long q = c.newest - OPEN + 1; q <= Math.min(c.newest, p - OPEN); q++) {
        close(c, slot(q));
      }
      c.newest = p;
    } else if (p <= c.newest - OPEN) {
      outOfOrder++;
      return;
    }
    int s = slot(p);
    if (c.counts[s] < Integer.MAX_VALUE) {
      c.counts[s]++;
    }
  }

  private static int slot(long period) {
    return (int) Math.floorMod(period, (long) OPEN);
  }

  private void close(Client c, int slot) {
    int n = c.counts[slot];
    if (n > 0) {
      userPeriods.add(n);
      c.peak = Math.max(c.peak, n);
      c.counts[slot] = 0;
    }
  }

  /** Closes every open period; call once, after the last request. */
  void finish() {
    if (closed) {
      return;
    }
    closed = true;
    for (Client c : clients.values()) {
      for (int s = 0; s < OPEN; s++) {
        close(c, s);
      }
      peaks.add(c.peak);
    }
  }

  long clients() {
    return clients.size();
  }

  Frequencies peaks() {
    return peaks;
  }

  Frequencies userPeriods() {
    return userPeriods;
  }

  /** The {@code n} clients with the highest peaks, highest first (ties by name). */
  List<Map.Entry<String, Integer>> top(int n) {
    Comparator<Map.Entry<String, Integer>> order =
        Map.Entry.<String, Integer>comparingByValue()
            .reversed()
            .thenComparing(Map.Entry.comparingByKey());
    PriorityQueue<Map.Entry<String, Integer>> worst = new PriorityQueue<>(order.reversed());
    for (Map.Entry<String, Client> e : clients.entrySet()) {
      worst.add(Map.entry(e.getKey(), e.getValue().peak));
      if (worst.size() > n) {
        worst.poll();
      }
    }
    List<Map.Entry<String, Integer>> out = new ArrayList<>(worst);
    out.sort(order);
    return out;
  }

  /** How often each count occurred; dense below 65,536, sparse above. */
  static final class Frequencies {
    private final long[] dense = new long[1 << 16];
    private final NavigableMap<Long, Long> sparse = new TreeMap<>();
    private long total;
    private NavigableMap<Long, Long> greater;

    void add(long value) {
      if (value < dense.length) {
        dense[(int) value]++;
      } else {
        sparse.merge(value, 1L, Long::sum);
      }
      total++;
      greater = null;
    }

    long total() {
      return total;
    }

    /** The distinct values, smallest first, each with how often it occurred. */
    NavigableMap<Long, Long> values() {
      NavigableMap<Long, Long> out = new TreeMap<>();
      for (int i = 0; i < dense.length; i++) {
        if (dense[i] > 0) {
          out.put((long) i, dense[i]);
        }
      }
      out.putAll(sparse);
      return out;
    }

    /** How many values are greater than {@code limit}. */
    long above(long limit) {
      if (greater == null) {
        greater = new TreeMap<>();
        long left = total;
        for (Map.Entry<Long, Long> e : values().entrySet()) {
          left -= e.getValue();
          greater.put(e.getKey(), left);
        }
      }
      Map.Entry<Long, Long> e = greater.floorEntry(limit);
      return e == null ? total : e.getValue();
    }

    /** The smallest value v with at least {@code percent} % of the values ≤ v; 0 when empty. */
    long percentile(double percent) {
      long seen = 0;
      long last = 0;
      for (Map.Entry<Long, Long> e : values().entrySet()) {
        seen += e.getValue();
        last = e.getKey();
        if (seen * 100.0 >= total * percent - 1e-9) {
          return last;
        }
      }
      return last;
    }

    long max() {
      return total == 0 ? 0 : values().lastKey();
    }
  }
}
