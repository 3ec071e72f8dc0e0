package dev.sluice.cli;

import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongConsumer;
import org.HdrHistogram.Histogram;

/**
 * An open-loop HTTP load generator: request {@code i} is due at {@code start + i / rate}, whether
 * or not earlier requests have been answered, and its latency is measured from when it was due, not
 * from when it could be sent. A server that stalls therefore shows its stall in every request that
 * waited behind it (the correction for coordinated omission that wrk2 makes). At most {@code
 * connections} requests are in flight at once, each on its own keep-alive HTTP/1.1 connection.
 */
final class LoadGenerator {

  /** Status classes counted per second, in this order. */
  static final List<String> KINDS = List.of("2xx", "429", "503", "other", "error");

  record Plan(
      List<URI> urls,
      double rate,
      Duration duration,
      int connections,
      Map<String, String> headers,
      String keyHeader,
      int keys,
      Duration timeout,
      Duration warmup) {

    /** The requests of the measured run. */
    long requests() {
      return requests(duration);
    }

    /** The requests a pass of {@code d} at the plan's rate sends. */
    long requests(Duration d) {
      return (long) Math.floor(rate * d.toNanos() / 1e9);
    }
  }

  /** What a run measured; latencies are in microseconds. */
  @SuppressWarnings("ArrayRecordComponent") // answers per second by status, read by index
  record Result(
      long planned,
      long sent,
      long answered,
      long unlimited,
      long errors,
      long unfinished,
      double seconds,
      Histogram latencyMicros,
      Map<Integer, Long> statuses,
      long[][] perSecond,
      String firstError) {

    double achievedRate() {
      return seconds <= 0 ? 0 : answered / seconds;
    }
  }

  private LoadGenerator() {}

  static Result run(Plan plan, LongConsumer elapsedMillis) throws InterruptedException {
    if (!plan.warmup().isZero()) {
      new Schedule(plan, plan.warmup(), "warmup-").run(ms -> {});
    }
    return new Schedule(plan, plan.duration(), "client-").run(elapsedMillis);
  }

  /**
   * One pass at the plan's rate: a dispatcher hands each request, when it is due, to a queue that
   * {@code connections} worker threads serve over keep-alive connections.
   */
  private static final class Schedule {
    private static final long DONE = -1;

    private final Plan plan;
    private final Duration duration;
    private final String keyPrefix;
    private final String headers;
    private final int seconds;
    private final AtomicLongArray perSecond;
    private final Histogram latency = new Histogram(TimeUnit.HOURS.toMicros(1), 3);
    private final Map<Integer, Long> statuses = new ConcurrentSkipListMap<>();
    private final AtomicLong answered = new AtomicLong();
    private final AtomicLong unlimited = new AtomicLong();
    private final AtomicLong errors = new AtomicLong();
    private final AtomicLong lastDone = new AtomicLong();
    private final AtomicReference<String> firstError = new AtomicReference<>();
    private final BlockingQueue<long[]> queue = new ArrayBlockingQueue<>(100_000);
    private long start;

    Schedule(Plan plan, Duration duration, String keyPrefix) {
      this.plan = plan;
      this.duration = duration;
      this.keyPrefix = keyPrefix;
      StringBuilder h = new StringBuilder("User-Agent: sluice-bench\r\n");
      plan.headers().forEach((k, v) -> h.append(k).append(": ").append(v).append("\r\n"));
      this.headers = h.toString();
      this.seconds = (int) Math.max(1, Math.ceil(duration.toMillis() / 1000.0));
      this.perSecond = new AtomicLongArray(seconds * KINDS.size());
    }

    Result run(LongConsumer elapsedMillis) throws InterruptedException {
      long n = plan.requests(duration);
      double nanosPerRequest = 1e9 / plan.rate();
      start = System.nanoTime();
      long deadline = start + duration.toNanos() + plan.timeout().toNanos();
      Thread[] workers = new Thread[plan.connections()];
      for (int w = 0; w < workers.length; w++) {
        workers[w] = new Thread(this::work, "sluice-bench-" + w);
        workers[w].setDaemon(true);
        workers[w].start();
      }
      long sent = 0;
      for (long i = 0; i < n; i++) {
        long due = start + (long) (i * nanosPerRequest);
        long wait;
        while ((wait = due - System.nanoTime()) > 0) {
          LockSupport.parkNanos(Math.min(wait, 50_000_000L));
          elapsedMillis.accept((System.nanoTime() - start) / 1_000_000);
        }
        long left = deadline - System.nanoTime();
        if (left <= 0 || !queue.offer(new long[] {i, due}, left, TimeUnit.NANOSECONDS)) {
          break;
        }
        sent++;
      }
      for (int w = 0; w < workers.length; w++) {
        queue.put(new long[] {DONE, 0});
      }
      long joinBy = Math.max(deadline, System.nanoTime()) + 1_000_000_000L;
      for (Thread t : workers) {
        t.join(Math.max(1, (joinBy - System.nanoTime()) / 1_000_000));
      }
      long unfinished = sent - answered.get() - errors.get();
      long end = Math.max(lastDone.get(), start + 1);
      long[][] table = new long[seconds][KINDS.size()];
      for (int s = 0; s < seconds; s++) {
        for (int k = 0; k < KINDS.size(); k++) {
          table[s][k] = perSecond.get(s * KINDS.size() + k);
        }
      }
      Histogram copy;
      synchronized (latency) {
        copy = latency.copy();
      }
      return new Result(
          n,
          sent,
          answered.get(),
          unlimited.get(),
          errors.get(),
          Math.max(0, unfinished),
          (end - start) / 1e9,
          copy,
          new TreeMap<>(statuses),
          table,
          firstError.get());
    }

    /** A worker: one keep-alive connection per URL, requests taken from the queue in turn. */
    private void work() {
      List<URI> urls = plan.urls();
      Http1Connection[] conns = new Http1Connection[urls.size()];
      int timeout = (int) Math.min(Integer.MAX_VALUE, plan.timeout().toMillis());
      for (int u = 0; u < conns.length; u++) {
        conns[u] = new Http1Connection(urls.get(u), headers, timeout);
      }
      try {
        while (true) {
          long[] job = queue.take();
          if (job[0] == DONE) {
            return;
          }
          long i = job[0];
          long due = job[1];
          String key =
              plan.keys() > 0
                  ? plan.keyHeader() + ": " + keyPrefix + (i % plan.keys()) + "\r\n"
                  : "";
          int second = (int) Math.min(seconds - 1, (due - start) / 1_000_000_000L);
          int kind;
          try {
            Http1Connection conn = conns[(int) (i % conns.length)];
            int status = conn.get(key);
            long now = System.nanoTime();
            if (status / 100 == 2 && !conn.limited()) {
              unlimited.incrementAndGet();
            }
            lastDone.accumulateAndGet(now, Math::max);
            statuses.merge(status, 1L, Long::sum);
            answered.incrementAndGet();
            synchronized (latency) {
              latency.recordValue(Math.max(0, (now - due) / 1000));
            }
            kind = status / 100 == 2 ? 0 : status == 429 ? 1 : status == 503 ? 2 : 3;
          } catch (IOException | RuntimeException e) {
            lastDone.accumulateAndGet(System.nanoTime(), Math::max);
            errors.incrementAndGet();
            firstError.compareAndSet(null, e.getClass().getSimpleName() + ": " + e.getMessage());
            kind = 4;
          }
          perSecond.incrementAndGet(second * KINDS.size() + kind);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } finally {
        for (Http1Connection c : conns) {
          c.close();
        }
      }
    }
  }
}
