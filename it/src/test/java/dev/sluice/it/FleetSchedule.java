package dev.sluice.it;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.stream.Collectors;

/**
 * A generated run of the fleet harness, from one seed: clients, each with one or more lanes of
 * requests (a lane sends its next request once the last one is answered, after a gap), to chosen
 * instances, and faults at chosen times. Printed whole, so a failure can be read and replayed
 * ({@code -Dsluice.fleet.seed}).
 */
record FleetSchedule(long seed, List<Client> clients, List<Fault> faults) {

  /** One request: wait {@code gapMillis}, send to {@code instance}, held {@code holdMillis}. */
  record Op(long gapMillis, int instance, long holdMillis) {
    @Override
    public String toString() {
      return (gapMillis > 0 ? "+" + gapMillis + "ms " : "")
          + "i"
          + instance
          + (holdMillis > 0 ? "(" + holdMillis + "ms)" : "");
    }
  }

  record Client(String name, List<List<Op>> lanes) {}

  enum Kind {
    /** SIGKILL an instance, then start it again (same clock offset). */
    KILL_INSTANCE,
    /** Kill memcached and start it again, empty, on the same port. */
    RESTART_MEMCACHED,
    /** Fill memcached (started small) with keys until it evicts. */
    EVICT,
    /** Cut every instance off memcached for {@code lengthMillis}, then restore. */
    FLAP,
    /** Freeze memcached (SIGSTOP) for {@code lengthMillis}, then thaw it (SIGCONT). */
    STALL
  }

  record Fault(long atMillis, Kind kind, int instance, long lengthMillis) {
    @Override
    public String toString() {
      return "@"
          + atMillis
          + "ms "
          + kind
          + (kind == Kind.KILL_INSTANCE ? " i" + instance : "")
          + (kind == Kind.FLAP || kind == Kind.STALL ? " " + lengthMillis + "ms" : "");
    }
  }

  /** How to generate: the run's length, the clients, the lanes, the faults to draw from. */
  record Shape(
      long millis,
      int clients,
      int lanes,
      boolean pinned,
      long holdMillis,
      List<Kind> faultKinds,
      int faults) {}

  static FleetSchedule generate(long seed, int instances, String prefix, Shape shape) {
    Random r = new Random(seed);
    List<Client> clients = new ArrayList<>();
    for (int c = 0; c < shape.clients(); c++) {
      int home = c % instances;
      List<List<Op>> lanes = new ArrayList<>();
      for (int l = 0; l < shape.lanes(); l++) {
        List<Op> ops = new ArrayList<>();
        long t = 0;
        while (t < shape.millis()) {
          // A burst of back-to-back requests, then a gap: short, a window or two, or long idle.
          int burst = 1 + r.nextInt(8);
          int spread = r.nextInt(3); // 0: one instance, else across them
          int instance = shape.pinned() ? home : r.nextInt(instances);
          for (int b = 0; b < burst; b++) {
            long gap = b == 0 ? 0 : r.nextInt(4) == 0 ? r.nextInt(120) : 0;
            int to = shape.pinned() || spread == 0 ? instance : r.nextInt(instances);
            long hold = shape.holdMillis() == 0 ? 0 : 50 + r.nextInt((int) shape.holdMillis());
            ops.add(new Op(gap, to, hold));
            t += gap + 15 + hold;
          }
          long idle =
              switch (r.nextInt(6)) {
                case 0 -> 0;
                case 1, 2 -> r.nextInt(300);
                case 3, 4 -> 300 + r.nextInt(1700);
                default -> 2000 + r.nextInt(3000);
              };
          ops.add(new Op(idle, shape.pinned() ? home : r.nextInt(instances), 0));
          t += idle + 15;
        }
        lanes.add(ops);
      }
      clients.add(new Client(prefix + "-" + seed + "-c" + c, lanes));
    }
    List<Fault> faults = new ArrayList<>();
    if (!shape.faultKinds().isEmpty()) {
      // Spread across the run, a few seconds apart, none in its first or last second.
      long slot = shape.millis() / (shape.faults() + 1);
      for (int f = 0; f < shape.faults(); f++) {
        Kind kind = shape.faultKinds().get(r.nextInt(shape.faultKinds().size()));
        long at = slot * (f + 1) + r.nextInt((int) Math.max(1, slot / 3));
        faults.add(new Fault(at, kind, r.nextInt(instances), 300 + r.nextInt(2200)));
      }
    }
    return new FleetSchedule(seed, clients, faults);
  }

  int requests() {
    return clients.stream().mapToInt(c -> c.lanes().stream().mapToInt(List::size).sum()).sum();
  }

  @Override
  public String toString() {
    StringBuilder b = new StringBuilder();
    b.append(String.format(Locale.ROOT, "seed %d, %d requests%n", seed, requests()));
    b.append("faults: ").append(faults).append(System.lineSeparator());
    for (Client c : clients) {
      for (int l = 0; l < c.lanes().size(); l++) {
        b.append(c.name())
            .append(" lane ")
            .append(l)
            .append(": ")
            .append(c.lanes().get(l).stream().map(Op::toString).collect(Collectors.joining(" ")))
            .append(System.lineSeparator());
      }
    }
    return b.toString();
  }
}
