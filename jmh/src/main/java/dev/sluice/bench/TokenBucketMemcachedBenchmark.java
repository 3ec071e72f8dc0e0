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
 * A token bucket on memcached, 8 threads on one hot key: Sluice's (one {@code incr} of the bucket's
 * theoretical arrival time for a bucket seen lately, {@code gets} and compare-and-set for one that
 * fell behind, an asynchronous {@code decr} to refund a refusal, and a deny cache that answers a
 * refused key locally until its next token) against Bucket4j's compare-and-swap design on the same
 * memcached ({@code gets}, then {@code cas}, again from the top when another writer won). {@code
 * allow}: a bucket never empty and always seen lately, so every call writes; {@code idle}: a bucket
 * that fills in 1 ms, so every call finds it full and behind (the catch-up path); {@code attack}: a
 * bucket of 10 a second under a flood, so nearly every call is refused. After each iteration,
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

  private BenchMemcached memcached;
  private MemcachedCounterStore store;
  private RateLimiter sluice;
  private MemcachedClient client;
  private CasProxyManager proxies;
  private BucketProxy bucket4j;
  private final LongAdder decisions = new LongAdder();
  private long operationsBefore;

  @Setup(Level.Trial)
  public void setUp() throws IOException {
    memcached = BenchMemcached.start();
    store = memcached.store();
    // allow: a million a second, holding a million (fill 1 s): never empty at this rate, and
    // every decision finds it seen within 1 % of its fill time. idle: a million a millisecond
    // (fill 1 ms), so every decision finds it full and behind: the catch-up path, every time.
    long capacity =
        switch (path) {
          case "allow" -> 1_000_000;
          case "idle" -> 1_000_000_000L;
          default -> 10;
        };
    sluice =
        (switch (path) {
              case "allow" ->
                  RateLimiter.tokenBucket(store).tier(1_000_000, Duration.ofSeconds(1), 1_000_000);
              case "idle" ->
                  RateLimiter.tokenBucket(store).tier(1_000_000, Duration.ofMillis(1), 1_000_000);
              default -> RateLimiter.tokenBucket(store).tier(10, Duration.ofSeconds(1), 10);
            })
            .id("bench-bucket-" + path)
            .build();
    client =
        new MemcachedClient(
            new ConnectionFactoryBuilder()
                .setProtocol(ConnectionFactoryBuilder.Protocol.BINARY)
                .setOpTimeout(50)
                .build(),
            AddrUtil.getAddresses(memcached.address()));
    proxies = new CasProxyManager(client);
    bucket4j =
        proxies
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

  @Setup(Level.Iteration)
  public void mark() {
    decisions.reset();
    proxies.reset();
    operationsBefore = memcached.operations();
  }

  @TearDown(Level.Iteration)
  public void report() {
    long n = decisions.sum();
    if (n > 0 && memcached.own()) {
      System.out.printf(
          "%n  memcached operations per decision: %.2f%s%n",
          (memcached.operations() - operationsBefore) / (double) n,
          proxies.attempts() == 0
              ? ""
              : String.format(
                  "; compare-and-swap attempts per decision %.2f, lost races %.1f %%",
                  proxies.attempts() / (double) n,
                  100.0 * proxies.lost() / Math.max(1, proxies.attempts())));
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    client.shutdown(1, TimeUnit.SECONDS);
    store.close();
    memcached.close();
  }

  /** Each thread's reused outcome. */
  @State(Scope.Thread)
  public static class Caller {
    final Outcome outcome = new Outcome();
  }

  @Benchmark
  public boolean sluice(Caller c) {
    decisions.increment();
    return sluice.tryAcquire("hot-key", 1, c.outcome);
  }

  @Benchmark
  public boolean bucket4jCompareAndSwap() {
    decisions.increment();
    return bucket4j.tryConsume(1);
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
