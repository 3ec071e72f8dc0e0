package dev.sluice.store.redis;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads each master's {@code INFO} every interval and counts the rise of {@code evicted_keys}: keys
 * Redis dropped before they expired because it reached {@code maxmemory}. An evicted counter starts
 * again from zero, so its client may get up to its limit again in that window.
 *
 * <p>A master's first answer is its baseline, and says at WARN what Redis does when it is full: an
 * evicting {@code maxmemory-policy} drops counters, {@code noeviction} refuses every write (each
 * decision then follows {@code onStoreFailure}). After that every rise is added to the master's
 * total ({@link #evictions()}); a master restarted or replaced (its count lower than the last
 * sample) adds its new count. When a master starts evicting, one WARN line says so, with its memory
 * and policy; it is logged again only after {@code quietMillis} without a rise.
 *
 * <p>{@code INFO} is sent without waiting and answered on Lettuce's threads, so the scheduler is
 * never blocked; a master is asked again only once it answered. A master that does not answer keeps
 * its last figures; one whose user may not run {@code INFO} is said once at WARN. Thread-safe.
 */
final class EvictionWatch implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(RedisCounterStore.class);

  /** How often each master's {@code INFO} is read unless told otherwise. */
  static final long DEFAULT_INTERVAL_MILLIS = 10_000;

  /** How long a master must not evict before its next eviction is logged again. */
  static final long QUIET_MILLIS = 10 * 60_000;

  /** Sends {@code INFO} to each master, by its name. */
  interface Masters {
    Map<String, CompletionStage<String>> info();
  }

  /** One master's figures, updated by its answers (one at a time per master). */
  private static final class Node {
    final String name;

    /** Redis's own {@code evicted_keys} at the last answer, or -1 before the first. */
    long last = -1;

    final AtomicLong total = new AtomicLong();

    /** When the master last evicted (monotonic millis), or {@link Long#MIN_VALUE}. */
    long lastRise = Long.MIN_VALUE;

    /** The policy last said at WARN, so a master replaced by one set alike is not said again. */
    String policy;

    Node(String name) {
      this.name = name;
    }
  }

  private final Masters masters;
  private final LongSupplier clock;
  private final long intervalMillis;
  private final long quietMillis;
  private final Map<String, Node> nodes = new ConcurrentHashMap<>();

  /** The masters in the order they were first seen, for {@link #evictions()}. */
  private final Map<String, Node> ordered = Collections.synchronizedMap(new LinkedHashMap<>());

  private final ScheduledFuture<?> task;
  private volatile boolean refusedSaid;

  /** The masters whose {@code INFO} is on its way: one at a time each. */
  private final java.util.Set<String> asking = ConcurrentHashMap.newKeySet();

  /**
   * Watches the {@code known} masters, and any that {@code masters} names later, every {@code
   * intervalMillis} on {@code scheduler}; {@code clock} (monotonic milliseconds) times the quiet
   * period.
   */
  EvictionWatch(
      Masters masters,
      Supplier<Iterable<String>> known,
      ScheduledExecutorService scheduler,
      LongSupplier clock,
      long intervalMillis,
      long quietMillis) {
    this.masters = masters;
    this.clock = clock;
    this.intervalMillis = intervalMillis;
    this.quietMillis = quietMillis;
    for (String name : known.get()) {
      node(name);
    }
    ScheduledFuture<?> t;
    try {
      t = scheduler.scheduleWithFixedDelay(this::poll, 0, intervalMillis, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      t = null; // the application shut its scheduler down: nothing is watched
    }
    this.task = t;
  }

  private Node node(String name) {
    return nodes.computeIfAbsent(
        name,
        n -> {
          Node node = new Node(n);
          ordered.put(n, node);
          return node;
        });
  }

  /** Each master's evictions since the watch began, in the order the masters were first seen. */
  Map<String, Long> evictions() {
    Map<String, Long> out = new LinkedHashMap<>();
    synchronized (ordered) {
      ordered.forEach((name, node) -> out.put(name, node.total.get()));
    }
    return Collections.unmodifiableMap(out);
  }

  /** Asks every master for its {@code INFO}; each answer is handled as it comes. */
  void poll() {
    Map<String, CompletionStage<String>> asked;
    try {
      asked = masters.info();
    } catch (RuntimeException e) {
      LOG.debug("redis INFO not sent", e); // not connected yet: the next poll asks again
      return;
    }
    asked.forEach(
        (name, answer) -> {
          if (!asking.add(name)) {
            return; // the last INFO has not answered: an older answer must not follow a newer one
          }
          answer.whenComplete(
              (info, error) -> {
                try {
                  if (error != null) {
                    refused(name, error);
                  } else {
                    sample(node(name), fields(info));
                  }
                } finally {
                  asking.remove(name);
                }
              });
        });
  }

  private void refused(String name, Throwable error) {
    String text = String.valueOf(error.getMessage());
    if (text.contains("NOPERM") || text.contains("permission")) {
      if (!refusedSaid) {
        refusedSaid = true;
        LOG.warn(
            "redis {} refused INFO ({}): its evictions cannot be watched, and"
                + " sluice.store.evictions stays at 0; grant the store's user +info",
            name,
            text);
      }
    } else {
      LOG.debug("redis {} INFO failed", name, error);
    }
  }

  /** The {@code name:value} lines of an {@code INFO} answer. */
  static Map<String, String> fields(String info) {
    Map<String, String> out = new java.util.HashMap<>();
    for (String line : info.lines().toList()) {
      int colon = line.indexOf(':');
      if (colon > 0 && !line.startsWith("#")) {
        out.put(line.substring(0, colon), line.substring(colon + 1).trim());
      }
    }
    return out;
  }

  /**
   * Counts a master's rise since its last answer, and logs its policy and the start of evictions.
   */
  private void sample(Node node, Map<String, String> info) {
    long now = clock.getAsLong();
    long evicted = number(info.get("evicted_keys"));
    if (evicted < 0) {
      return;
    }
    synchronized (node) {
      sayPolicy(node, info);
      long rise = node.last < 0 ? 0 : evicted >= node.last ? evicted - node.last : evicted;
      node.last = evicted;
      if (rise <= 0) {
        return;
      }
      node.total.addAndGet(rise);
      boolean starting = node.lastRise == Long.MIN_VALUE || now - node.lastRise >= quietMillis;
      node.lastRise = now;
      if (starting) {
        LOG.warn(
            "redis {} is evicting: {} keys dropped for memory in the last {} ms ({} of {} bytes"
                + " used, maxmemory-policy {}). An evicted counter starts again from zero, so its"
                + " client may get up to its limit again in that window; give Redis more memory"
                + " (docs/RELIABILITY.md sizes it). Logged again after {} min without evictions.",
            node.name,
            rise,
            intervalMillis,
            info.get("used_memory"),
            info.get("maxmemory"),
            info.get("maxmemory_policy"),
            quietMillis / 60_000);
      }
    }
  }

  /** Says once per master (and again when it changes) what Redis does when it is full. */
  private static void sayPolicy(Node node, Map<String, String> info) {
    String policy = info.get("maxmemory_policy");
    long max = number(info.get("maxmemory"));
    if (policy == null || max < 0) {
      return;
    }
    String said = policy + "/" + max;
    if (said.equals(node.policy)) {
      return;
    }
    node.policy = said;
    if (max == 0) {
      LOG.info(
          "redis {} has no maxmemory: it evicts nothing, and grows until the host runs out of"
              + " memory (docs/RELIABILITY.md sizes it)",
          node.name);
    } else if (policy.equals("noeviction")) {
      LOG.warn(
          "redis {} refuses writes when full (maxmemory {} bytes, maxmemory-policy noeviction):"
              + " every decision then follows its rule's onStoreFailure; size maxmemory for the"
              + " counters (docs/RELIABILITY.md) and alert on used_memory",
          node.name,
          max);
    } else {
      LOG.warn(
          "redis {} evicts keys when full (maxmemory {} bytes, maxmemory-policy {}): an evicted"
              + " counter starts again from zero; size maxmemory for the counters"
              + " (docs/RELIABILITY.md) and alert on sluice.store.evictions",
          node.name,
          max,
          policy);
    }
  }

  private static long number(String s) {
    if (s == null) {
      return -1;
    }
    try {
      return Long.parseLong(s.trim());
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  @Override
  public void close() {
    if (task != null) {
      task.cancel(false);
    }
  }
}
