package dev.sluice.bench;

import dev.sluice.Outcome;
import dev.sluice.RateLimiter;
import dev.sluice.store.memcached.MemcachedCounterStore;
import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.BucketProxy;
import io.github.bucket4j.distributed.proxy.ClientSideConfig;
import io.github.bucket4j.distributed.proxy.generic.compare_and_swap.AbstractCompareAndSwapBasedProxyManager;
import io.github.bucket4j.distributed.proxy.generic.compare_and_swap.AsyncCompareAndSwapOperation;
import io.github.bucket4j.distributed.proxy.generic.compare_and_swap.CompareAndSwapOperation;
import io.github.bucket4j.distributed.remote.RemoteBucketState;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import net.spy.memcached.AddrUtil;
import net.spy.memcached.CASResponse;
import net.spy.memcached.CASValue;
import net.spy.memcached.ConnectionFactoryBuilder;
import net.spy.memcached.MemcachedClient;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * A token bucket on memcached, all threads on one hot key: Sluice's (the bucket's theoretical
 * arrival time moved by compare-and-set within its ceiling, one read-modify-write for all the
 * requests of an instance waiting on the key, on the CAS id its last write returned, and a deny
 * cache that answers a refused key locally until its next token) against Bucket4j's
 * compare-and-swap design on the same memcached ({@code gets}, then {@code cas}, again from the top
 * when another writer won). {@code allow}: a bucket never empty, so every call writes; {@code
 * idle}: a bucket that fills in 1 ms, so every call finds it full and behind; {@code attack}: a
 * bucket of 10 a second under a flood, so nearly every call is refused. {@code instances}: how many
 * clients (instances of a fleet, each its own connection and, for Sluice, its own store) the
 * threads are spread over; with 2, their writes race. Threads: {@code -t}. After each iteration,
 * prints the memcached operations per decision (and, for Bucket4j, the lost races).
 */
@BenchmarkMode({Mode.Throughput, Mode.SampleTime})
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
@Threads(8)
@State(Scope.Benchmark)
public class TokenBucketMemcachedBenchmark {

  @Param({"allow", "idle", "attack"})
  public String path;

  @Param({"1", "2"})
  public int instances;

  private BenchMemcached memcached;
  private MemcachedCounterStore[] stores;
  private RateLimiter[] sluice;
  private MemcachedClient[] clients;
  private CasProxyManager[] proxies;
  private BucketProxy[] bucket4j;
  private final java.util.concurrent.atomic.AtomicInteger threadIds =
      new java.util.concurrent.atomic.AtomicInteger();
  private final LongAdder decisions = new LongAdder();
  private long operationsBefore;

  @Setup(Level.Trial)
  public void setUp() throws IOException {
    memcached = BenchMemcached.start();
    // allow: a million a second, holding a million (fill 1 s): never empty at this rate. idle: a
    // million a millisecond (fill 1 ms), so every decision finds it full and behind.
    long capacity =
        switch (path) {
          case "allow" -> 1_000_000;
          case "idle" -> 1_000_000_000L;
          default -> 10;
        };
    stores = new MemcachedCounterStore[instances];
    sluice = new RateLimiter[instances];
    clients = new MemcachedClient[instances];
    proxies = new CasProxyManager[instances];
    bucket4j = new BucketProxy[instances];
    for (int i = 0; i < instances; i++) {
      stores[i] = memcached.store();
      sluice[i] =
          (switch (path) {
                case "allow" ->
                    RateLimiter.tokenBucket(stores[i])
                        .tier(1_000_000, Duration.ofSeconds(1), 1_000_000);
                case "idle" ->
                    RateLimiter.tokenBucket(stores[i])
                        .tier(1_000_000, Duration.ofMillis(1), 1_000_000);
                default -> RateLimiter.tokenBucket(stores[i]).tier(10, Duration.ofSeconds(1), 10);
              })
              .id("bench-bucket-" + path)
              .build();
      clients[i] =
          new MemcachedClient(
              new ConnectionFactoryBuilder()
                  .setProtocol(ConnectionFactoryBuilder.Protocol.BINARY)
                  .setOpTimeout(50)
                  .build(),
              AddrUtil.getAddresses(memcached.address()));
      proxies[i] = new CasProxyManager(clients[i]);
      bucket4j[i] =
          proxies[i]
              .builder()
              .build(
                  "bucket4j-" + path,
                  () ->
                      BucketConfiguration.builder()
                          .addLimit(
                              Bandwidth.builder()
                                  .capacity(capacity)
                                  .refillGreedy(capacity, Duration.ofSeconds(1))
                                  .build())
                          .build());
    }
  }

  @Setup(Level.Iteration)
  public void mark() {
    decisions.reset();
    for (CasProxyManager p : proxies) {
      p.reset();
    }
    operationsBefore = memcached.operations();
  }

  @TearDown(Level.Iteration)
  public void report() {
    long n = decisions.sum();
    long attempts = 0;
    long lost = 0;
    for (CasProxyManager p : proxies) {
      attempts += p.attempts();
      lost += p.lost();
    }
    if (n > 0 && memcached.own()) {
      System.out.printf(
          "%n  memcached operations per decision: %.2f%s%n",
          (memcached.operations() - operationsBefore) / (double) n,
          attempts == 0
              ? ""
              : String.format(
                  "; compare-and-swap attempts per decision %.2f, lost races %.1f %%",
                  attempts / (double) n, 100.0 * lost / Math.max(1, attempts)));
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    for (int i = 0; i < instances; i++) {
      clients[i].shutdown(1, TimeUnit.SECONDS);
      stores[i].close();
    }
    memcached.close();
  }

  /** Each thread's reused outcome, and the instance it calls. */
  @State(Scope.Thread)
  public static class Caller {
    final Outcome outcome = new Outcome();
    int instance;

    @Setup(Level.Trial)
    public void pick(TokenBucketMemcachedBenchmark b) {
      instance = b.threadIds.getAndIncrement() % b.instances;
    }
  }

  @Benchmark
  public boolean sluice(Caller c) {
    decisions.increment();
    return sluice[c.instance].tryAcquire("hot-key", 1, c.outcome);
  }

  @Benchmark
  public boolean bucket4jCompareAndSwap(Caller c) {
    decisions.increment();
    return bucket4j[c.instance].tryConsume(1);
  }

  /**
   * Bucket4j's generic compare-and-swap proxy on memcached: the state is one item, read with {@code
   * gets} and written with {@code cas} on the id read (or {@code add} for a new bucket).
   */
  static final class CasProxyManager extends AbstractCompareAndSwapBasedProxyManager<String> {
    private final MemcachedClient client;
    private final LongAdder attempts = new LongAdder();
    private final LongAdder lost = new LongAdder();

    CasProxyManager(MemcachedClient client) {
      super(ClientSideConfig.getDefault());
      this.client = client;
    }

    void reset() {
      attempts.reset();
      lost.reset();
    }

    long attempts() {
      return attempts.sum();
    }

    long lost() {
      return lost.sum();
    }

    @Override
    protected CompareAndSwapOperation beginCompareAndSwapOperation(String key) {
      return new CompareAndSwapOperation() {
        private long cas;

        @Override
        public Optional<byte[]> getStateData(Optional<Long> timeoutNanos) {
          CASValue<Object> v = client.gets(key);
          if (v == null) {
            return Optional.empty();
          }
          cas = v.getCas();
          return Optional.of((byte[]) v.getValue());
        }

        @Override
        public boolean compareAndSwap(
            byte[] originalData,
            byte[] newData,
            RemoteBucketState newState,
            Optional<Long> timeoutNanos) {
          attempts.increment();
          boolean won;
          try {
            won =
                originalData == null
                    ? client.add(key, 3600, newData).get(50, TimeUnit.MILLISECONDS)
                    : client.cas(key, cas, 3600, newData) == CASResponse.OK;
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
          } catch (java.util.concurrent.ExecutionException
              | java.util.concurrent.TimeoutException e) {
            throw new UncheckedIOException(new IOException(e));
          }
          if (!won) {
            lost.increment();
          }
          return won;
        }
      };
    }

    @Override
    protected AsyncCompareAndSwapOperation beginAsyncCompareAndSwapOperation(String key) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void removeProxy(String key) {
      var unused = client.delete(key);
    }

    @Override
    protected CompletableFuture<Void> removeAsync(String key) {
      return CompletableFuture.failedFuture(new UnsupportedOperationException());
    }

    @Override
    public boolean isAsyncModeSupported() {
      return false;
    }
  }
}
