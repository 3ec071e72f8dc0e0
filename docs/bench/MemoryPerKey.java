import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.sluice.spi.CounterUpdate;
import dev.sluice.store.inmemory.InMemoryCounterStore;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Bytes of heap per active counter: {@code n} clients (10 million by default) each counted once, in
 * the in-memory store with room for all of them, or in a Caffeine cache bounded to {@code n}
 * entries that expire 2 minutes after their write, each a client's {@link AtomicLong} (the least a
 * limiter over Caffeine keeps). The identities are made before the first measurement and held
 * throughout, so what is measured is what the store adds for a client, not the client's name. Heap
 * in use is read after full collections.
 *
 * <p>Run as a source file, with the benchmarks jar (Sluice) and Caffeine on the class path:
 *
 * <pre>
 * CP=jmh/target/benchmarks.jar:$HOME/.m2/repository/com/github/ben-manes/caffeine/caffeine/3.2.3/caffeine-3.2.3.jar
 * java -Xmx6g -cp $CP docs/bench/MemoryPerKey.java sluice 10000000
 * java -Xmx6g -cp $CP docs/bench/MemoryPerKey.java caffeine 10000000
 * </pre>
 */
public final class MemoryPerKey {

  private MemoryPerKey() {}

  public static void main(String[] args) {
    String which = args.length > 0 ? args[0] : "sluice";
    int n = args.length > 1 ? Integer.parseInt(args[1]) : 10_000_000;
    String[] ids = new String[n];
    for (int i = 0; i < n; i++) {
      ids[i] = "client-" + i;
    }
    long before = used();
    Object kept =
        switch (which) {
          case "sluice" -> sluice(ids);
          case "caffeine" -> caffeine(ids);
          default -> throw new IllegalArgumentException("sluice or caffeine: " + which);
        };
    long after = used();
    System.out.printf(
        "%s: %,d counters, %,d bytes of heap, %.1f bytes per counter%n",
        which, n, after - before, (double) (after - before) / n);
    java.lang.ref.Reference.reachabilityFence(kept);
    java.lang.ref.Reference.reachabilityFence(ids);
  }

  private static InMemoryCounterStore sluice(String[] ids) {
    InMemoryCounterStore store = InMemoryCounterStore.builder().maximumCounters(ids.length).build();
    long period = 60_000;
    long window = System.currentTimeMillis() / period;
    for (String id : ids) {
      long count =
          store.increment(List.of(new CounterUpdate("per-key", id, period, window, 1))).current(0);
      if (count != 1) {
        throw new IllegalStateException("a new client counted more than once: " + id);
      }
    }
    return store;
  }

  private static Cache<String, AtomicLong> caffeine(String[] ids) {
    Cache<String, AtomicLong> cache =
        Caffeine.newBuilder()
            .maximumSize(ids.length)
            .expireAfterWrite(Duration.ofMinutes(2))
            .build();
    for (String id : ids) {
      cache.get(id, k -> new AtomicLong()).incrementAndGet();
    }
    cache.cleanUp();
    return cache;
  }

  private static long used() {
    for (int i = 0; i < 3; i++) {
      System.gc();
    }
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }
}
