package dev.sluice.store.memcached;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.RateLimiter;
import dev.sluice.spi.FakeClock;
import dev.sluice.testkit.MemcachedServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * A token bucket shared by several instances (each its own memcached client and limiter, as
 * separate hosts have) against exact GCRA computed from the same clock, over generated traffic:
 * gaps from none to several times a full refill, concurrent bursts spread over the instances in any
 * split, and runs of requests of 1 to 3 tokens to one instance or another. Each try is a new client
 * identity; the deny caches are on, as in production. Admitted must equal the model, step by step.
 */
class FleetTokenBucketModelTest {

  private static final long EPOCH_MILLIS = 1_577_836_800_000L;
  private static final int MAX_INSTANCES = 4;

  private static MemcachedServer server;
  private static final List<MemcachedCounterStore> STORES = new ArrayList<>();
  private static ExecutorService pool;
  private static final AtomicInteger IDENTITY = new AtomicInteger();
  private static final java.util.concurrent.atomic.AtomicLong DECISIONS =
      new java.util.concurrent.atomic.AtomicLong();

  @BeforeContainer
  static void start() {
    server = MemcachedServer.start();
    for (int i = 0; i < MAX_INSTANCES; i++) {
      STORES.add(
          MemcachedCounterStore.builder()
              .servers(server.address())
              .prefix("model")
              .storeClock(false)
              .operationTimeout(Duration.ofSeconds(5))
              .build());
    }
    pool = Executors.newFixedThreadPool(32);
  }

  @AfterContainer
  static void stop() {
    long decisions = DECISIONS.get();
    long writes = 0;
    long lost = 0;
    long reads = 0;
    for (MemcachedCounterStore s : STORES) {
      writes += s.lines.writesSent.sum();
      lost += s.lines.writesLost.sum();
      reads += s.lines.readsSent.sum();
    }
    System.out.printf(
        "fleet token bucket model: %d decisions, %d compare-and-sets (%d lost), %d reads%n",
        decisions, writes, lost, reads);
    if (pool != null) {
      pool.shutdownNow();
    }
    STORES.forEach(MemcachedCounterStore::close);
    STORES.clear();
    if (server != null) {
      server.close();
    }
  }

  /**
   * One step: the clock moves {@code gapMillis}, then the requests, all at that instant: at once
   * from many threads when {@code concurrent} (one token each), else one after the other. Request
   * {@code j} goes to instance {@code instances[j]} and asks for {@code permits[j]} tokens.
   */
  record Step(long gapMillis, boolean concurrent, List<Integer> instances, List<Integer> permits) {}

  @Provide
  Arbitrary<List<Step>> steps() {
    Arbitrary<Long> gaps =
        Arbitraries.frequencyOf(
            Tuple.of(5, Arbitraries.longs().between(0, 20)),
            Tuple.of(3, Arbitraries.longs().between(0, 3_000)),
            Tuple.of(2, Arbitraries.longs().between(0, 200_000)));
    Arbitrary<Integer> skew = Arbitraries.integers().between(0, 3);
    Arbitrary<Step> step =
        Combinators.combine(
                gaps,
                Arbitraries.of(true, false),
                Arbitraries.integers().between(1, 30),
                skew,
                Arbitraries.longs())
            .as(
                (gap, concurrent, n, split, seed) -> {
                  java.util.Random r = new java.util.Random(seed);
                  List<Integer> at = new ArrayList<>(n);
                  List<Integer> permits = new ArrayList<>(n);
                  for (int j = 0; j < n; j++) {
                    // split 0: even; 1: three of four to instance 0; 2: one instance; 3: random.
                    at.add(
                        switch (split) {
                          case 0 -> j % MAX_INSTANCES;
                          case 1 -> j % 4 == 3 ? 1 + r.nextInt(MAX_INSTANCES - 1) : 0;
                          case 2 -> (int) (Math.abs(seed) % MAX_INSTANCES);
                          default -> r.nextInt(MAX_INSTANCES);
                        });
                    permits.add(concurrent ? 1 : 1 + r.nextInt(3));
                  }
                  return new Step(gap, concurrent, at, permits);
                });
    return step.list().ofMinSize(1).ofMaxSize(25);
  }

  @Property(tries = 300)
  void admittedEqualsExactGcraWhateverTheSplitAndIdle(
      @ForAll("steps") List<Step> steps,
      @ForAll @IntRange(min = 1, max = 40) int rate,
      @ForAll @IntRange(min = 1, max = 20) int burst,
      @ForAll("periods") long periodMillis)
      throws Exception {
    FakeClock clock = new FakeClock(System.currentTimeMillis());
    List<RateLimiter> limiters = new ArrayList<>();
    for (MemcachedCounterStore s : STORES) {
      limiters.add(
          RateLimiter.tokenBucket(s)
              .tier(rate, Duration.ofMillis(periodMillis), burst)
              .clock(clock)
              .build());
    }
    String key = "client-" + IDENTITY.incrementAndGet();
    long interval = periodMillis * 1_000_000 / rate;
    long tat = 0;
    for (int s = 0; s < steps.size(); s++) {
      Step step = steps.get(s);
      clock.advanceMillis(step.gapMillis());
      long now = (clock.millis() - EPOCH_MILLIS) * 1_000_000;
      int exact = 0;
      for (int p : step.permits()) {
        long next = Math.max(tat, now) + p * interval;
        if (next <= now + burst * interval) {
          tat = next;
          exact++;
        }
      }
      DECISIONS.addAndGet(step.instances().size());
      int admitted =
          step.concurrent() ? concurrently(limiters, key, step) : oneByOne(limiters, key, step);
      assertEquals(
          exact,
          admitted,
          "step " + s + " of " + steps.size() + " (" + step.instances().size() + " requests)");
    }
  }

  @Provide
  Arbitrary<Long> periods() {
    return Arbitraries.of(1_000L, 10_000L, 60_000L);
  }

  private static int oneByOne(List<RateLimiter> limiters, String key, Step step) {
    int admitted = 0;
    for (int j = 0; j < step.instances().size(); j++) {
      if (limiters.get(step.instances().get(j)).tryAcquire(key, step.permits().get(j)).allowed()) {
        admitted++;
      }
    }
    return admitted;
  }

  private static int concurrently(List<RateLimiter> limiters, String key, Step step)
      throws Exception {
    CountDownLatch go = new CountDownLatch(1);
    List<Future<Boolean>> answers = new ArrayList<>();
    for (int j = 0; j < step.instances().size(); j++) {
      RateLimiter l = limiters.get(step.instances().get(j));
      answers.add(
          pool.submit(
              () -> {
                go.await();
                return l.tryAcquire(key).allowed();
              }));
    }
    go.countDown();
    int admitted = 0;
    for (Future<Boolean> f : answers) {
      admitted += f.get() ? 1 : 0;
    }
    return admitted;
  }
}
