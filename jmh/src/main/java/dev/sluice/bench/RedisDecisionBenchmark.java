package dev.sluice.bench;

import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.store.redis.RedisCounterStore;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.ConfigurationBuilder;
import io.github.bucket4j.distributed.BucketProxy;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.ProxyManager;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
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
import org.openjdk.jmh.annotations.Warmup;

/**
 * Decisions a second on Redis, Sluice against the floor and its peers in one run, each deciding
 * {@code limits} limits (1 s, 1 min, 1 h) for one of 1,000 clients, every limit high enough that
 * all are allowed:
 *
 * <ul>
 *   <li>{@code sluice}: a sliding-window {@link RateLimiter} on the Redis store, one {@code
 *       count.lua} call for all the limits;
 *   <li>{@code floor}: the same {@code count.lua} called through Lettuce directly ({@code EVALSHA},
 *       the same keys and arguments, the previous windows' counts known), deciding nothing;
 *   <li>{@code scg}: Spring Cloud Gateway's RedisRateLimiter pattern, its token-bucket script once
 *       per limit, one after the other as chained filters call it;
 *   <li>{@code bucket4j}: Bucket4j's Lettuce backend ({@code LettuceBasedProxyManager},
 *       compare-and-swap: a {@code GET}, then a Lua compare-and-set), one bucket holding every
 *       limit as a bandwidth.
 * </ul>
 *
 * <p>Threads come from {@code -t}. Starts its own redis-server, or uses {@code
 * -Dsluice.redis=redis://host:port}.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(1)
@State(Scope.Benchmark)
public class RedisDecisionBenchmark {

  private static final long HIGH = 1_000_000_000L;
  private static final Duration[] PERIODS = {
    Duration.ofSeconds(1), Duration.ofMinutes(1), Duration.ofHours(1)
  };

  @Param({"1", "3"})
  public int limits;

  private BenchRedis redis;
  private RedisCounterStore store;
  private RateLimiter sluice;
  private RedisClient client;
  private StatefulRedisConnection<String, String> strings;
  private StatefulRedisConnection<String, byte[]> bytes;
  private RedisAsyncCommands<String, String> commands;
  private String countSha;
  private String scgSha;
  private final String[] keys = new String[1_000];
  private final BucketProxy[] buckets = new BucketProxy[1_000];

  @Setup(Level.Trial)
  public void setUp() throws Exception {
    redis = BenchRedis.start();
    store = redis.store();
    RateLimiter.Builder b = RateLimiter.slidingWindow(store).id("limits" + limits);
    for (int i = 0; i < limits; i++) {
      b = b.tier(HIGH, PERIODS[i]);
    }
    sluice = b.build();
    client = redis.client();
    strings = client.connect();
    commands = strings.async();
    countSha = strings.sync().scriptLoad(resource("/dev/sluice/store/redis/count.lua"));
    scgSha = strings.sync().scriptLoad(resource("/dev/sluice/bench/scg-token-bucket.lua"));
    bytes = client.connect(RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE));
    ProxyManager<String> proxies =
        Bucket4jLettuce.casBasedBuilder(bytes)
            .expirationAfterWrite(
                ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(
                    Duration.ofSeconds(10)))
            .build();
    ConfigurationBuilder config = BucketConfiguration.builder();
    for (int i = 0; i < limits; i++) {
      Duration period = PERIODS[i];
      config = config.addLimit(l -> l.capacity(HIGH).refillGreedy(HIGH, period));
    }
    BucketConfiguration bucketConfig = config.build();
    for (int i = 0; i < keys.length; i++) {
      keys[i] = "client-" + i;
      buckets[i] = proxies.builder().build("bucket4j:{" + keys[i] + "}", () -> bucketConfig);
    }
    // A just-started redis-server on a busy machine may miss the first 50 ms timeouts.
    Decision d = sluice.tryAcquire("check");
    for (int i = 0; i < 50 && (!d.allowed() || d.storeFailed()); i++) {
      Thread.sleep(100);
      d = sluice.tryAcquire("check");
    }
    if (!d.allowed() || d.storeFailed()) {
      throw new IllegalStateException("redis at " + redis.uri() + " did not answer: " + d);
    }
  }

  private static String resource(String name) throws IOException {
    try (InputStream in = RedisDecisionBenchmark.class.getResourceAsStream(name)) {
      if (in == null) {
        throw new IllegalStateException("missing " + name);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    bytes.close();
    strings.close();
    client.shutdown();
    store.close();
    redis.close();
  }

  /** Each thread walks the clients from its own place. */
  @State(Scope.Thread)
  public static class Cursor {
    int next = ThreadLocalRandom.current().nextInt(1_000);
  }

  private static int index(Cursor c) {
    int i = c.next;
    c.next = i + 1 == 1_000 ? 0 : i + 1;
    return i;
  }

  @Benchmark
  public boolean sluice(Cursor c) {
    return sluice.tryAcquire(keys[index(c)]).allowed();
  }

  /** {@code count.lua} with the arguments the store sends: 'c' (previous count known), +1. */
  @Benchmark
  public List<Object> floor(Cursor c) throws Exception {
    String key = keys[index(c)];
    long now = System.currentTimeMillis();
    String[] ks = new String[limits];
    String[] args = new String[5 * limits];
    for (int i = 0; i < limits; i++) {
      long period = PERIODS[i].toMillis();
      ks[i] = "floor:{" + key + "}:limits" + limits + ':' + period + ':' + now / period;
      args[5 * i] = "c";
      args[5 * i + 1] = "1";
      args[5 * i + 2] = Long.toString(2 * period + 1_000);
      args[5 * i + 3] = "0";
      args[5 * i + 4] = "9223372036854775807";
    }
    return await(commands.evalsha(countSha, ScriptOutputType.MULTI, ks, args));
  }

  /** One token-bucket script a limit, each waited for before the next, as chained filters do. */
  @Benchmark
  public boolean scg(Cursor c) throws Exception {
    String key = keys[index(c)];
    String now = Long.toString(System.currentTimeMillis() / 1_000);
    boolean allowed = true;
    for (int i = 0; i < limits && allowed; i++) {
      long seconds = PERIODS[i].toSeconds();
      String rate = Long.toString(Math.max(1, HIGH / seconds));
      List<Object> reply =
          await(
              commands.evalsha(
                  scgSha,
                  ScriptOutputType.MULTI,
                  new String[] {"scg" + i + ":{" + key + "}"},
                  rate,
                  Long.toString(HIGH),
                  now,
                  "1"));
      allowed = ((Long) reply.get(0)) == 1L;
    }
    return allowed;
  }

  @Benchmark
  public boolean bucket4j(Cursor c) {
    return buckets[index(c)].tryConsume(1);
  }

  private static <T> T await(io.lettuce.core.RedisFuture<T> f)
      throws InterruptedException, ExecutionException, TimeoutException {
    try {
      return f.get(1, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RedisNoScriptException) {
        throw new IllegalStateException("script flushed from the server", e);
      }
      throw e;
    }
  }
}
