package dev.sluice.bench;

import dev.sluice.engine.CoarseClock;
import dev.sluice.store.memcached.KeyHash;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import net.spy.memcached.DefaultHashAlgorithm;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What the parts of an in-memory decision cost on their own, one thread: the clock reads, a hash
 * lookup, an atomic add, a thread-local read. A floor to read {@link InMemoryDecisionBenchmark}
 * against. And where a memcached operation's key is placed among the servers: Ketama's MD5 against
 * the store's {@link KeyHash}, on a key of the demo's shape.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Thread)
public class PartsBenchmark {

  private final ConcurrentHashMap<String, Object> map = new ConcurrentHashMap<>();
  private final String key = "client-0";
  private final AtomicLong counter = new AtomicLong();
  private final ThreadLocal<Object> local = ThreadLocal.withInitial(Object::new);
  private final CoarseClock coarse = CoarseClock.shared();
  private final String memcachedKey = "sluice:per-key:k-000123:1000:w1.1795742400";

  {
    map.put(key, new Object());
  }

  private final dev.sluice.store.inmemory.InMemoryCounterStore store =
      dev.sluice.store.inmemory.InMemoryCounterStore.create();
  private final OneCounter batch = new OneCounter();

  /** One counter of one window, as the engine asks the store for it. */
  static final class OneCounter implements dev.sluice.spi.CounterBatch {
    long current;

    @Override
    public int size() {
      return 1;
    }

    @Override
    public String policy(int i) {
      return "default";
    }

    @Override
    public String identity(int i) {
      return "client-0";
    }

    @Override
    public long periodMillis(int i) {
      return 1000;
    }

    @Override
    public long window(int i) {
      return 1;
    }

    @Override
    public long delta(int i) {
      return 1;
    }

    @Override
    public void counted(int i, long current, long previous) {
      this.current = current;
    }
  }

  /**
   * The in-memory store's increment of one counter, without the engine around it: the batch names
   * it with a new key each call ({@link dev.sluice.spi.CounterBatch#key}'s default), so the store
   * looks it up every time.
   */
  @Benchmark
  public long storeIncrement() {
    store.increment(batch);
    return batch.current;
  }

  @Benchmark
  public long currentTimeMillis() {
    return System.currentTimeMillis();
  }

  @Benchmark
  public long nanoTime() {
    return System.nanoTime();
  }

  @Benchmark
  public long coarseClock() {
    return coarse.millis();
  }

  @Benchmark
  public Object hashLookup() {
    return map.get(key);
  }

  @Benchmark
  public long atomicAdd() {
    return counter.getAndAdd(1);
  }

  @Benchmark
  public Object threadLocal() {
    return local.get();
  }

  @Benchmark
  public long ketamaHash() {
    return DefaultHashAlgorithm.KETAMA_HASH.hash(memcachedKey);
  }

  @Benchmark
  public long keyHash() {
    return KeyHash.INSTANCE.hash(memcachedKey);
  }
}
