package dev.sluice.it;

import dev.sluice.testkit.MemcachedServer;
import dev.sluice.testkit.TcpProxy;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Runs a {@link FleetSchedule} on a {@link Fleet}: a thread per lane sends its requests, one more
 * injects the faults at their times, and everything that happened is recorded with the host's
 * wall-clock times, for the models to judge.
 */
final class FleetRun {

  /** One request as it happened: sent and answered in host wall-clock milliseconds. */
  record Sent(
      String client,
      int lane,
      int seq,
      int asked,
      int instance,
      long sentMillis,
      long answeredMillis,
      long holdMillis,
      Fleet.Answer answer) {

    boolean admitted() {
      return answer.status() == 200;
    }

    boolean refused() {
      return answer.status() == 429;
    }

    @Override
    public String toString() {
      return client
          + " lane "
          + lane
          + " #"
          + seq
          + " i"
          + instance
          + (asked != instance ? "(asked i" + asked + ")" : "")
          + " ["
          + sentMillis
          + ".."
          + answeredMillis
          + "] "
          + (answer.status() == 0 ? "no answer: " + answer.error() : answer.status())
          + (answer.status() == 200 && !answer.counted() ? " uncounted" : "");
    }
  }

  /**
   * A fault as it happened, from its start to when its effect was over; {@code backMillis} is when
   * the instances could reach memcached again (thawed, restored, started again), before the harness
   * measured its clock: {@code fromMillis} for a fault that leaves memcached reachable.
   */
  record Happened(
      FleetSchedule.Kind kind, int instance, long fromMillis, long backMillis, long toMillis) {

    /** Whether the fault kept every instance from memcached, so none could measure its tick. */
    boolean cutOff() {
      return kind == FleetSchedule.Kind.STALL
          || kind == FleetSchedule.Kind.FLAP
          || kind == FleetSchedule.Kind.RESTART_MEMCACHED;
    }

    @Override
    public String toString() {
      return kind
          + (kind == FleetSchedule.Kind.KILL_INSTANCE ? " i" + instance : "")
          + " ["
          + fromMillis
          + ".."
          + toMillis
          + (backMillis > fromMillis ? ", back at " + backMillis : "")
          + "]";
    }
  }

  /**
   * Memcached's clock against the host's, as measured from {@code atMillis} on: the fleet decides
   * on memcached's clock, so a request's window is found from its host times plus this.
   */
  record Phase(long atMillis, long deltaMillis) {}

  /**
   * How long after the instances can reach a restarted or thawed memcached the fleet may still
   * decide on its old tick: the watch of the next tick (every second) and the tick after it, with
   * room for a late scheduler on a loaded machine. A memcached cut off or frozen again before then
   * keeps them on the old tick until as long after that fault.
   */
  static final long REMEASURE_MILLIS = 3_000;

  final List<Sent> sent = Collections.synchronizedList(new ArrayList<>());
  final List<Phase> phases = Collections.synchronizedList(new ArrayList<>());
  final List<Happened> faults = Collections.synchronizedList(new ArrayList<>());
  final List<String> problems = Collections.synchronizedList(new ArrayList<>());

  private final Fleet fleet;
  private final MemcachedServer memcached;
  private final TcpProxy proxy;
  private final java.util.concurrent.atomic.AtomicIntegerArray ready;

  FleetRun(Fleet fleet, MemcachedServer memcached, TcpProxy proxy) {
    this.fleet = fleet;
    this.memcached = memcached;
    this.proxy = proxy;
    this.ready = new java.util.concurrent.atomic.AtomicIntegerArray(fleet.size());
    for (int i = 0; i < fleet.size(); i++) {
      ready.set(i, 1);
    }
  }

  /** Runs {@code schedule} to its end: {@code method} and {@code path(seq)} for each request. */
  FleetRun run(FleetSchedule schedule, String method, java.util.function.LongFunction<String> path)
      throws InterruptedException {
    phases.add(new Phase(System.currentTimeMillis(), delta(memcached)));
    long start = System.currentTimeMillis() + 200;
    List<Thread> threads = new ArrayList<>();
    CountDownLatch lanesDone =
        new CountDownLatch(schedule.clients().stream().mapToInt(c -> c.lanes().size()).sum());
    for (FleetSchedule.Client c : schedule.clients()) {
      for (int l = 0; l < c.lanes().size(); l++) {
        int lane = l;
        List<FleetSchedule.Op> ops = c.lanes().get(l);
        threads.add(
            new Thread(
                () -> {
                  try {
                    lane(c.name(), lane, ops, start, method, path);
                  } finally {
                    lanesDone.countDown();
                  }
                },
                "lane-" + c.name() + "-" + l));
      }
    }
    Thread faulter =
        new Thread(
            () -> {
              for (FleetSchedule.Fault f : schedule.faults()) {
                long wait = start + f.atMillis() - System.currentTimeMillis();
                try {
                  if (wait > 0 && lanesDone.await(wait, TimeUnit.MILLISECONDS)) {
                    return; // the requests are over
                  }
                  inject(f);
                } catch (Exception | AssertionError e) {
                  problems.add("fault " + f + " failed: " + e);
                }
              }
            },
            "faults");
    Thread watch = new Thread(() -> watchTicks(lanesDone), "tick-watch");
    threads.forEach(Thread::start);
    faulter.start();
    watch.start();
    for (Thread t : threads) {
      t.join();
    }
    faulter.join();
    watch.join();
    return this;
  }

  /**
   * Until {@code done}, watches memcached's tick as the instances do, on a connection of its own
   * (past the proxy): memcached skips a second when its timer's drift has added up to one (about
   * every quarter to half hour), and the fleet measures the new phase then. A tick a second off the
   * last one's phase, or more than {@link FleetModels#EPSILON_MILLIS} off, is recorded as a new
   * phase, as a restart's is, placed within 20 ms as the instances place it.
   */
  private void watchTicks(CountDownLatch done) {
    long phase = Long.MIN_VALUE; // kept across connections: a move while reconnecting is seen
    while (done.getCount() > 0) {
      try (Socket s = new Socket(InetAddress.getLoopbackAddress(), memcached.port())) {
        s.setSoTimeout(3_000);
        BufferedReader in =
            new BufferedReader(
                new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII));
        long second = -1;
        long before = 0;
        while (!done.await(5, TimeUnit.MILLISECONDS)) {
          long b = System.currentTimeMillis();
          long now = time(s.getOutputStream(), in);
          long a = System.currentTimeMillis();
          if (second >= 0 && now != second && a - before <= 20) {
            long seen = now * 1000 - (before + a) / 2;
            if (phase != Long.MIN_VALUE && Math.abs(seen - phase) > FleetModels.EPSILON_MILLIS) {
              phases.add(new Phase(System.currentTimeMillis(), seen));
            }
            phase = seen;
          }
          second = now;
          before = b;
        }
      } catch (IOException | RuntimeException | AssertionError e) {
        // Stalled or restarted (as the measurement of a new phase may be): watch again on a new
        // connection, and measure again a move not measured yet.
        pause(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  /** Memcached's {@code stats} time, asked on an open connection. */
  private static long time(OutputStream out, BufferedReader in) throws IOException {
    out.write("stats\r\n".getBytes(StandardCharsets.US_ASCII));
    out.flush();
    long time = -1;
    for (String line = in.readLine(); !"END".equals(line); line = in.readLine()) {
      if (line == null) {
        throw new IOException("memcached closed the connection");
      }
      if (line.startsWith("STAT time ")) {
        time = Long.parseLong(line.substring("STAT time ".length()));
      }
    }
    return time;
  }

  private void lane(
      String client,
      int lane,
      List<FleetSchedule.Op> ops,
      long start,
      String method,
      java.util.function.LongFunction<String> path) {
    long wait = start - System.currentTimeMillis();
    pause(wait);
    for (int seq = 0; seq < ops.size(); seq++) {
      FleetSchedule.Op op = ops.get(seq);
      pause(op.gapMillis());
      int to = op.instance();
      for (int k = 0; k < fleet.size() && ready.get(to) == 0; k++) {
        to = (to + 1) % fleet.size();
      }
      long sentAt = System.currentTimeMillis();
      Fleet.Answer a = fleet.send(to, method, path.apply(op.holdMillis()), client);
      long answeredAt = System.currentTimeMillis();
      sent.add(
          new Sent(client, lane, seq, op.instance(), to, sentAt, answeredAt, op.holdMillis(), a));
    }
  }

  /** A pause between one client's requests (the schedule's gaps), not a wait for a window. */
  private static void pause(long millis) {
    if (millis <= 0) {
      return;
    }
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void inject(FleetSchedule.Fault f) throws Exception {
    long from = System.currentTimeMillis();
    long back = from;
    switch (f.kind()) {
      case KILL_INSTANCE -> {
        int i = f.instance();
        ready.set(i, 0);
        fleet.kill(i);
        fleet.start(i);
        ready.set(i, 1);
      }
      case RESTART_MEMCACHED -> {
        memcached.restart();
        back = System.currentTimeMillis();
        phases.add(new Phase(back, delta(memcached)));
      }
      case EVICT -> evict();
      case FLAP -> {
        proxy.cut();
        pause(f.lengthMillis());
        proxy.restore();
        back = System.currentTimeMillis();
      }
      case STALL -> {
        memcached.stall();
        pause(f.lengthMillis());
        memcached.resume();
        back = System.currentTimeMillis();
        // Thawed, its timer runs late and every tick with it: a new phase, as after a restart.
        phases.add(new Phase(back, delta(memcached)));
      }
    }
    faults.add(new Happened(f.kind(), f.instance(), from, back, System.currentTimeMillis()));
  }

  /**
   * Memcached's clock minus the host's, in ms, measured as the instances measure it: at the instant
   * its {@code stats} time ticks over to the next second.
   */
  static long delta(MemcachedServer memcached) {
    long second = memcached.stat("time");
    long before = System.currentTimeMillis();
    long deadline = before + 3_000;
    while (System.currentTimeMillis() < deadline) {
      long now = memcached.stat("time");
      long after = System.currentTimeMillis();
      if (now != second && after - before <= 20) {
        return now * 1000 - (before + after) / 2;
      }
      // Not ticked yet, or ticked while a read waited (a stall): the next tick places it.
      second = now;
      before = after;
    }
    throw new AssertionError("memcached's clock did not tick");
  }

  /**
   * The clock differences the fleet may be deciding on at {@code millis}: the latest measured, and
   * any it replaced until the instances have had {@link #REMEASURE_MILLIS} of reaching memcached to
   * measure the new one (an instance finds a restarted or thawed memcached's moved tick within a
   * second of reaching it and measures it within another; while memcached is frozen, restarting or
   * cut off, no instance can, so a tick that moved just before a flap is measured only after it).
   */
  List<Long> deltas(long millis) {
    return deltas(List.copyOf(phases), List.copyOf(faults), millis);
  }

  static List<Long> deltas(List<Phase> phases, List<Happened> faults, long millis) {
    // In time order: the faults and the watch of the tick record phases each in their own time.
    List<Phase> all = new ArrayList<>(phases);
    all.sort(Comparator.comparingLong(Phase::atMillis));
    List<Long> out = new ArrayList<>();
    for (int k = 0; k < all.size(); k++) {
      Phase p = all.get(k);
      boolean replaced = k + 1 < all.size() && all.get(k + 1).atMillis() <= millis;
      if (!replaced || measuredBy(faults, all.get(k + 1).atMillis(), 0) >= millis) {
        out.add(p.deltaMillis());
      }
    }
    return out;
  }

  /**
   * By when every instance has measured a tick that moved at {@code millis}: {@link
   * #REMEASURE_MILLIS} after it, or after memcached could be reached again when a fault that cut it
   * off was on then or began before the instances had that long (and so on, through a chain of such
   * faults), or after {@code endMillis} when that is later.
   */
  static long measuredBy(List<Happened> faults, long millis, long endMillis) {
    long back = millis;
    for (boolean later = true; later; ) {
      later = false;
      for (Happened f : faults) {
        if (f.cutOff() && f.fromMillis() <= back + REMEASURE_MILLIS && f.backMillis() > back) {
          back = f.backMillis();
          later = true;
        }
      }
    }
    return Math.max(back, endMillis) + REMEASURE_MILLIS;
  }

  /**
   * Writes small keys, of the counters' size, straight to memcached until it has evicted some:
   * memcached evicts within a slab class, so the filler is as small as a counter.
   */
  private void evict() {
    long before = memcached.stat("evictions");
    try (Socket s = new Socket(InetAddress.getLoopbackAddress(), memcached.port())) {
      OutputStream out = s.getOutputStream();
      StringBuilder b = new StringBuilder();
      for (int round = 0; round < 20 && memcached.stat("evictions") <= before; round++) {
        for (int i = 0; i < 20_000; i++) {
          b.setLength(0);
          b.append("set filler:")
              .append(round)
              .append(':')
              .append(i)
              .append(":")
              .append(System.nanoTime())
              .append(" 0 300 2 noreply\r\n42\r\n");
          out.write(b.toString().getBytes(StandardCharsets.US_ASCII));
        }
        out.flush();
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    if (memcached.stat("evictions") <= before) {
      problems.add("memcached did not evict");
    }
  }
}
