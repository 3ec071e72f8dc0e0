package dev.sluice.testkit;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import reactor.blockhound.BlockHound;

/**
 * BlockHound for the tests of Sluice's non-blocking paths: a thread whose name starts with a prefix
 * given here (an event loop's) fails on any blocking call, but for the few waits those paths take
 * for a moment and never for I/O. Installed once per JVM; a later call adds its prefix.
 */
public final class NonBlocking {

  private static final Set<String> PREFIXES = ConcurrentHashMap.newKeySet();
  private static boolean installed;

  private NonBlocking() {}

  /** Forbids blocking on threads named {@code prefix…}, installing BlockHound on the first call. */
  public static synchronized void forbidOn(String prefix) {
    PREFIXES.add(prefix);
    if (installed) {
      return;
    }
    BlockHound.builder()
        .nonBlockingThreadPredicate(
            p -> p.or(t -> PREFIXES.stream().anyMatch(t.getName()::startsWith)))
        // Queuing a memcached operation takes spymemcached's queue lock for a moment, never I/O.
        .allowBlockingCallsInside("net.spy.memcached.MemcachedConnection", "addOperation")
        .allowBlockingCallsInside("net.spy.memcached.protocol.TCPMemcachedNodeImpl", "addOp")
        // The deadline of a memcached call is a task on the store's scheduler: its queue's lock.
        .allowBlockingCallsInside("java.util.concurrent.ScheduledThreadPoolExecutor", "schedule")
        // An event loop that shuts down waits out its quiet period: Netty's own wait, not ours.
        .allowBlockingCallsInside(
            "io.netty.util.concurrent.SingleThreadEventExecutor", "confirmShutdown")
        .install();
    installed = true;
  }
}
