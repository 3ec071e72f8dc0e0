package dev.sluice.store.memcached;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.sluice.testkit.MemcachedServer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import net.spy.memcached.AddrUtil;
import net.spy.memcached.ConnectionFactoryBuilder;
import net.spy.memcached.MemcachedClient;
import net.spy.memcached.internal.OperationFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Operations queued together on a real memcached are written when {@link Wakeups#together} ends,
 * every one of them, however it ends. The client's I/O thread is told to sleep a minute between
 * wake-ups ({@code net.spy.wakeupDelay}), and each test begins with it inside its select, so an
 * operation whose wake-up was held and never given would wait that minute: each answer below is
 * awaited for at most 5 s.
 */
class WakeupsTest {

  private static final long ANSWER_SECONDS = 5;
  private static final AtomicInteger KEY = new AtomicInteger();

  private static MemcachedServer server;
  private static MemcachedClient client;

  @BeforeAll
  static void start() throws Exception {
    server = MemcachedServer.start();
    String before = System.getProperty("net.spy.wakeupDelay");
    System.setProperty("net.spy.wakeupDelay", "60000");
    try {
      client =
          new MemcachedClient(
              Wakeups.factory(
                  new ConnectionFactoryBuilder()
                      .setProtocol(ConnectionFactoryBuilder.Protocol.BINARY)
                      .setDaemon(true)
                      .build()),
              AddrUtil.getAddresses(server.address()));
    } finally {
      if (before == null) {
        System.clearProperty("net.spy.wakeupDelay");
      } else {
        System.setProperty("net.spy.wakeupDelay", before);
      }
    }
    // Connected, and the I/O thread back in its long select.
    assertEquals(1L, client.asyncIncr("warm", 1L, 1L, 60).get(ANSWER_SECONDS, TimeUnit.SECONDS));
  }

  @AfterAll
  static void stop() {
    if (client != null) {
      client.shutdown(1, TimeUnit.SECONDS);
    }
    if (server != null) {
      server.close();
    }
  }

  /**
   * Waits until the client's I/O thread is inside its select, where an operation queued without a
   * wake-up stays for the minute; before that it would still find one on its way there.
   */
  @BeforeEach
  void ioThreadSelecting() throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(ANSWER_SECONDS);
    while (System.nanoTime() < deadline) {
      for (Thread t : Thread.getAllStackTraces().keySet()) {
        if (t.getName().startsWith("Memcached IO over") && t.getName().contains(server.address())) {
          for (StackTraceElement e : t.getStackTrace()) {
            if (e.getMethodName().equals("doSelect")) {
              return;
            }
          }
        }
      }
      Thread.sleep(1);
    }
    throw new AssertionError("the I/O thread never went back to its select");
  }

  private static Future<Long> incr(String key) {
    return client.asyncIncr(key, 1L, 1L, 60);
  }

  private static void assertAnsweredOnce(List<Future<Long>> sent) throws Exception {
    for (Future<Long> f : sent) {
      assertEquals(1L, f.get(ANSWER_SECONDS, TimeUnit.SECONDS));
    }
  }

  @Test
  void everyOperationQueuedTogetherIsWrittenWhenItEnds() throws Exception {
    for (int n : new int[] {1, 3, 500}) {
      List<Future<Long>> sent = new ArrayList<>();
      Wakeups.together(
          () -> {
            for (int i = 0; i < n; i++) {
              sent.add(incr("together" + KEY.incrementAndGet()));
            }
          });
      assertAnsweredOnce(sent);
    }
    assertEquals(0, Wakeups.depth(), "no hold left behind");
  }

  @Test
  void insideAHoldWhatWasQueuedWaitsForItsEnd() throws Exception {
    List<Future<Long>> sent = new ArrayList<>();
    CountDownLatch answered = new CountDownLatch(1);
    Wakeups.together(
        () -> {
          OperationFuture<Long> op = client.asyncIncr("held" + KEY.incrementAndGet(), 1L, 1L, 60);
          var unused = op.addListener(f -> answered.countDown());
          sent.add(op);
          try {
            assertFalse(answered.await(200, TimeUnit.MILLISECONDS), "written inside the hold");
          } catch (InterruptedException e) {
            throw new AssertionError(e);
          }
        });
    assertAnsweredOnce(sent);
  }

  @Test
  void anInnerHoldWakesWhenItEndsSoWhatRanInsideItMayWaitForItsAnswers() throws Exception {
    List<Future<Long>> sent = new ArrayList<>();
    Wakeups.together(
        () -> {
          sent.add(incr("outer" + KEY.incrementAndGet()));
          Wakeups.together(() -> sent.add(incr("inner" + KEY.incrementAndGet())));
          try {
            assertAnsweredOnce(sent);
          } catch (Exception e) {
            throw new AssertionError(e);
          }
          sent.add(incr("outer" + KEY.incrementAndGet()));
        });
    assertAnsweredOnce(sent);
    assertEquals(0, Wakeups.depth());
  }

  @Test
  void moreOperationsTogetherThanANodesQueueHoldsAreAllWritten() throws Exception {
    // spymemcached's queue holds 16,384 operations a node, and refuses one more at once.
    int n = 20_000;
    List<Future<Long>> sent = new ArrayList<>(n);
    String prefix = "many" + KEY.incrementAndGet() + ":";
    Wakeups.together(
        () -> {
          for (int i = 0; i < n; i++) {
            sent.add(incr(prefix + i));
          }
        });
    assertAnsweredOnce(sent);
  }

  @Test
  void aReleaseWithoutAHoldLeavesTheNextOperationsUnheld() throws Exception {
    Wakeups.release();
    assertEquals(0, Wakeups.depth());
    assertAnsweredOnce(List.of(incr("unheld" + KEY.incrementAndGet())));
  }

  @Test
  void whatWasQueuedBeforeAFailureIsStillWritten() throws Exception {
    List<Future<Long>> sent = new ArrayList<>();
    assertThrows(
        IllegalStateException.class,
        () ->
            Wakeups.together(
                () -> {
                  sent.add(incr("failed" + KEY.incrementAndGet()));
                  throw new IllegalStateException("queueing failed");
                }));
    assertAnsweredOnce(sent);
    assertEquals(0, Wakeups.depth());
  }

  @Test
  void outsideAHoldEachOperationWakesTheIoThreadAsSpymemcachedDoes() throws Exception {
    assertAnsweredOnce(List.of(incr("alone" + KEY.incrementAndGet())));
  }
}
