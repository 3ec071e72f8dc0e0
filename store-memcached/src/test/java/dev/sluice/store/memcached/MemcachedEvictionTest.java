package dev.sluice.store.memcached;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.spi.CounterUpdate;
import dev.sluice.testkit.MemcachedServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * A memcached out of memory evicts counters; the store reads its {@code stats}, reports the
 * evictions per node and logs their start once.
 */
class MemcachedEvictionTest {

  private static final long MINUTE = 60_000;

  /** Counts one window of {@code n} identities from {@code from} on, 100 a round trip. */
  private static void flood(MemcachedCounterStore store, int from, int n, long window) {
    List<CounterUpdate> batch = new ArrayList<>();
    for (int i = from; i < from + n; i++) {
      batch.add(new CounterUpdate("per-key", "client-" + i, MINUTE, window, 1));
      if (batch.size() == 100) {
        store.increment(batch);
        batch.clear();
      }
    }
    if (!batch.isEmpty()) {
      store.increment(batch);
    }
  }

  private static MemcachedCounterStore store(
      MemcachedServer server, Duration quiet, AtomicLong clock) {
    return MemcachedCounterStore.builder()
        .servers(server.address())
        .operationTimeout(Duration.ofSeconds(2))
        .statsInterval(Duration.ofMillis(100))
        .evictionQuiet(quiet)
        .statsClock(clock::get)
        .build();
  }

  @Test
  void evictionsAreCountedPerNodeAndTheirStartIsLoggedOnce() throws Exception {
    PrintStream err = System.err;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    long window = System.currentTimeMillis() / MINUTE;
    AtomicLong clock = new AtomicLong(); // the quiet period's time, moved by hand
    try (MemcachedServer server = MemcachedServer.start(2);
        MemcachedCounterStore store = store(server, Duration.ofSeconds(2), clock)) {
      String node = server.address();
      assertEquals(Map.of(node, 0L), store.evictions(), "every node listed from the start");
      assertTrue(MemcachedServer.await(Duration.ofSeconds(5), () -> server.stat("cmd_get") >= 0));
      System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
      // The first flood: 160,000 counters into 2 MB, over several reads of the stats.
      for (int round = 0; round < 8; round++) {
        flood(store, round * 20_000, 20_000, window);
      }
      assertTrue(
          MemcachedServer.await(
              Duration.ofSeconds(5), () -> store.evictions().get(node) >= server.stat("evictions")),
          "the store saw every eviction: " + store.evictions() + " of " + server.stat("evictions"));
      long first = store.evictions().get(node);
      assertTrue(first > 100_000, "evictions seen: " + first);
      assertEquals(1, lines(captured, "is evicting"), "logged once while it evicts:\n" + captured);
      // Quiet for longer than the quiet period, then evicting again: logged again, once.
      clock.addAndGet(2_500);
      assertEquals(1, lines(captured, "is evicting"));
      flood(store, 1_000_000, 40_000, window);
      assertTrue(
          MemcachedServer.await(Duration.ofSeconds(5), () -> store.evictions().get(node) > first),
          "counting again");
      assertTrue(
          MemcachedServer.await(Duration.ofSeconds(5), () -> lines(captured, "is evicting") >= 2),
          captured.toString(StandardCharsets.UTF_8));
      assertEquals(2, lines(captured, "is evicting"), captured.toString(StandardCharsets.UTF_8));
      System.out.printf(
          "memcached -m 2: %,d counters written, %,d evicted (memcached says %,d), %,d items"
              + " left%n",
          200_000,
          store.evictions().get(node),
          server.stat("evictions"),
          server.stat("curr_items"));
    } finally {
      System.setErr(err);
    }
    String log = captured.toString(StandardCharsets.UTF_8);
    assertTrue(log.contains("starts again from zero"), log);
  }

  private static int lines(ByteArrayOutputStream captured, String text) {
    return captured.toString(StandardCharsets.UTF_8).split(text, -1).length - 1;
  }

  @Test
  void aCounterTakesOneSmallItem() {
    // What a counter costs memcached: 20,000 counters of a typical key, in a memcached large
    // enough to evict none; its stats give the bytes per item and the slab chunk it sits in.
    long window = System.currentTimeMillis() / MINUTE;
    try (MemcachedServer server = MemcachedServer.start(64);
        MemcachedCounterStore store = store(server, Duration.ofMinutes(10), new AtomicLong())) {
      int n = 20_000;
      flood(store, 0, n, window);
      Map<String, String> stats = server.stats();
      long items = Long.parseLong(stats.get("curr_items"));
      long bytes = Long.parseLong(stats.get("bytes"));
      assertEquals(n, items);
      assertEquals(0, server.stat("evictions"));
      long chunk = 0;
      long used = 0;
      for (String line : server.command("stats slabs", "END")) {
        String[] p = line.split(" ", -1);
        if (p.length == 3 && p[1].endsWith(":used_chunks") && Long.parseLong(p[2]) > used) {
          used = Long.parseLong(p[2]);
          String slab = p[1].substring(0, p[1].indexOf(':'));
          chunk = chunkSize(server, slab);
        }
      }
      String key = store.keyOf(new CounterUpdate("per-key", "client-12345", MINUTE, window, 1));
      System.out.printf(
          "a counter: key %s (%d bytes); %d bytes per item (stats bytes ÷ curr_items), in a"
              + " %d-byte slab chunk%n",
          key, key.length(), bytes / items, chunk);
      assertTrue(bytes / items < 2 * key.length() + 64, bytes / items + " bytes per item");
      assertTrue(chunk >= bytes / items, "a chunk holds its item");
    }
  }

  private static long chunkSize(MemcachedServer server, String slab) {
    for (String line : server.command("stats slabs", "END")) {
      String[] p = line.split(" ", -1);
      if (p.length == 3 && p[1].equals(slab + ":chunk_size")) {
        return Long.parseLong(p[2]);
      }
    }
    return -1;
  }
}
