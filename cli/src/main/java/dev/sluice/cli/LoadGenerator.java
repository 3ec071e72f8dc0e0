package dev.sluice.cli;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.Semaphore;
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
 * connections} requests are in flight at once.
 */
final class LoadGenerator {

  /** Status classes counted per second, in this order. */
  static final List<String> KINDS = List.of("2xx", "429", "503", "other", "error");

  record Plan(
      URI url,
      double rate,
      Duration duration,
      int connections,
      Map<String, String> headers,
      String keyHeader,
      int keys,
      Duration timeout,
      Duration warmup) {

    long requests() {
      return (long) Math.floor(rate * duration.toNanos() / 1e9);
    }
  }

  /** What a run measured; latencies are in microseconds. */
  record Result(
      long planned,
      long sent,
      long answered,
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
    HttpClient client =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(plan.timeout())
            .followRedirects(HttpClient.Redirect.NEVER)
            .build();
    if (!plan.warmup().isZero()) {
      new Schedule(client, plan, plan.warmup(), "warmup-").run(ms -> {});
    }
    return new Schedule(client, plan, plan.duration(), "client-").run(elapsedMillis);
  }

  /** One pass at the plan's rate; what it measured is its {@link Result}. */
  private static final class Schedule {
    private final HttpClient client;
    private final Plan plan;
    private final Duration duration;
    private final String keyPrefix;
    private final int seconds;
    private final AtomicLongArray perSecond;
    private final Histogram latency = new Histogram(TimeUnit.HOURS.toMicros(1), 3);
    private final Map<Integer, Long> statuses = new ConcurrentSkipListMap<>();
    private final AtomicLong answered = new AtomicLong();
    private final AtomicLong errors = new AtomicLong();
    private final AtomicLong lastDone = new AtomicLong();
    private final AtomicReference<String> firstError = new AtomicReference<>();
    private final Semaphore slots;

    Schedule(HttpClient client, Plan plan, Duration duration, String keyPrefix) {
      this.client = client;
      this.plan = plan;
      this.duration = duration;
      this.keyPrefix = keyPrefix;
      this.seconds = (int) Math.max(1, Math.ceil(duration.toMillis() / 1000.0));
      this.perSecond = new AtomicLongArray(seconds * KINDS.size());
      this.slots = new Semaphore(plan.connections());
    }

    Result run(LongConsumer elapsedMillis) throws InterruptedException {
      long n = (long) Math.floor(plan.rate() * duration.toNanos() / 1e9);
      double nanosPerRequest = 1e9 / plan.rate();
      long start = System.nanoTime();
      long deadline = start + duration.toNanos() + plan.timeout().toNanos();
      long sent = 0;
      for (long i = 0; i < n; i++) {
        long due = start + (long) (i * nanosPerRequest);
        long wait;
        while ((wait = due - System.nanoTime()) > 0) {
          LockSupport.parkNanos(Math.min(wait, 50_000_000L));
          elapsedMillis.accept((System.nanoTime() - start) / 1_000_000);
        }
        long left = deadline - System.nanoTime();
        if (left <= 0 || !slots.tryAcquire(left, TimeUnit.NANOSECONDS)) {
          break;
        }
        send(i, due, (int) Math.min(seconds - 1, (due - start) / 1_000_000_000L));
        sent++;
      }
      long left = Math.max(0, deadline - System.nanoTime()) + 1_000_000_000L;
      boolean drained = slots.tryAcquire(plan.connections(), left, TimeUnit.NANOSECONDS);
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
          errors.get(),
          drained ? 0 : sent - answered.get() - errors.get(),
          (end - start) / 1e9,
          copy,
          new TreeMap<>(statuses),
          table,
          firstError.get());
    }

    private void send(long i, long due, int second) {
      HttpRequest.Builder b = HttpRequest.newBuilder(plan.url()).timeout(plan.timeout()).GET();
      plan.headers().forEach(b::header);
      if (plan.keys() > 0) {
        b.header(plan.keyHeader(), keyPrefix + (i % plan.keys()));
      }
      CompletableFuture<?> unused =
          client
              .sendAsync(b.build(), HttpResponse.BodyHandlers.discarding())
              .whenComplete(
                  (response, failure) -> {
                    long now = System.nanoTime();
                    lastDone.accumulateAndGet(now, Math::max);
                    int kind;
                    if (failure != null) {
                      errors.incrementAndGet();
                      Throwable cause = failure.getCause() == null ? failure : failure.getCause();
                      firstError.compareAndSet(
                          null, cause.getClass().getSimpleName() + ": " + cause.getMessage());
                      kind = 4;
                    } else {
                      int status = response.statusCode();
                      statuses.merge(status, 1L, Long::sum);
                      answered.incrementAndGet();
                      synchronized (latency) {
                        latency.recordValue(Math.max(0, (now - due) / 1000));
                      }
                      kind = status / 100 == 2 ? 0 : status == 429 ? 1 : status == 503 ? 2 : 3;
                    }
                    perSecond.incrementAndGet(second * KINDS.size() + kind);
                    slots.release();
                  });
    }
  }
}
