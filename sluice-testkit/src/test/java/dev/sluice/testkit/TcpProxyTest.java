package dev.sluice.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link TcpProxy} in front of a loopback echo server: what passes, what each fault does to the
 * open connections and to new ones, and what {@link TcpProxy#restore} brings back.
 */
class TcpProxyTest {

  private ServerSocket echo;
  private TcpProxy proxy;

  @BeforeEach
  void start() throws IOException {
    echo = echoOn(0);
    proxy = TcpProxy.to(echo.getLocalPort());
  }

  /** A loopback server on {@code port} (0: any) that sends back what it reads. */
  private static ServerSocket echoOn(int port) throws IOException {
    ServerSocket server = new ServerSocket();
    server.setReuseAddress(true);
    server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 50);
    Thread accept =
        new Thread(
            () -> {
              while (true) {
                try {
                  Socket s = server.accept();
                  Thread t = new Thread(() -> echoAll(s), "echo");
                  t.setDaemon(true);
                  t.start();
                } catch (IOException e) {
                  return;
                }
              }
            },
            "echo-accept");
    accept.setDaemon(true);
    accept.start();
    return server;
  }

  @AfterEach
  void stop() throws IOException {
    proxy.close();
    echo.close();
  }

  private static void echoAll(Socket s) {
    try (s;
        InputStream in = s.getInputStream();
        OutputStream out = s.getOutputStream()) {
      in.transferTo(out);
    } catch (IOException e) {
      // closed
    }
  }

  private Socket connect() throws IOException {
    return connect(proxy);
  }

  private static Socket connect(TcpProxy through) throws IOException {
    Socket s = new Socket(InetAddress.getLoopbackAddress(), through.port());
    s.setSoTimeout(10_000);
    return s;
  }

  /** Sends {@code text} and reads its echo. */
  private static String roundTrip(Socket s, String text) throws IOException {
    byte[] sent = text.getBytes(StandardCharsets.US_ASCII);
    s.getOutputStream().write(sent);
    s.getOutputStream().flush();
    return new String(s.getInputStream().readNBytes(sent.length), StandardCharsets.US_ASCII);
  }

  /** Whether the proxy closed {@code s}: its next read sees the end or a reset, not a timeout. */
  private static boolean closedByProxy(Socket s) {
    try {
      s.getOutputStream().write('x');
      return s.getInputStream().read() < 0;
    } catch (SocketTimeoutException e) {
      return false;
    } catch (IOException e) {
      return true;
    }
  }

  @Test
  void passesBytesBothWaysAndCountsConnections() throws IOException {
    try (Socket a = connect();
        Socket b = connect()) {
      assertEquals("ping", roundTrip(a, "ping"));
      assertEquals("pong", roundTrip(b, "pong"));
      assertEquals(2, proxy.accepted());
      assertEquals("127.0.0.1:" + proxy.port(), proxy.address());
    }
  }

  /** Asserts that {@code fault} closes a connection open through the proxy. */
  private void assertClosesAnOpenConnection(Runnable fault) throws IOException {
    try (Socket open = connect()) {
      assertEquals("a", roundTrip(open, "a"));
      fault.run();
      assertTrue(closedByProxy(open), "an open connection survived");
    }
  }

  /** Asserts that a connection opened now passes bytes. */
  private void assertPasses() throws IOException {
    try (Socket next = connect()) {
      assertEquals("b", roundTrip(next, "b"));
    }
  }

  @Test
  void refuseClosesConnectionsAndRefusesNewOnesUntilRestored() throws IOException {
    assertClosesAnOpenConnection(proxy::refuse);
    assertThrows(ConnectException.class, this::connect);
    proxy.restore();
    assertPasses();
  }

  @Test
  void cutClosesConnectionsAndEachNewOneUntilRestored() throws IOException {
    assertClosesAnOpenConnection(proxy::cut);
    try (Socket during = connect()) {
      assertTrue(closedByProxy(during), "a new connection passed while cut");
    }
    assertEquals(1, proxy.accepted());
    proxy.restore();
    assertPasses();
  }

  @Test
  void dropConnectionsClosesOpenOnesAndPassesNewOnes() throws IOException {
    assertClosesAnOpenConnection(proxy::dropConnections);
    assertPasses();
  }

  @Test
  void aClientOfATargetThatIsDownSeesItsConnectionClosedAndTheProxyGoesOn() throws IOException {
    // A port nothing listens on (a server closed under a blocked accept may still take one).
    int target = Servers.freePort();
    try (TcpProxy toNothing = TcpProxy.to(target)) {
      try (Socket refused = connect(toNothing)) {
        assertTrue(closedByProxy(refused), "a connection to nothing stayed open");
      }
      try (ServerSocket late = echoOn(target);
          Socket next = connect(toNothing)) {
        assertEquals("b", roundTrip(next, "b"));
      }
    }
  }

  @Test
  void delayHoldsEveryChunkBothWays() throws IOException {
    try (Socket s = connect()) {
      assertEquals("warm", roundTrip(s, "warm"));
      proxy.delay(100);
      long start = System.nanoTime();
      assertEquals("slow", roundTrip(s, "slow"));
      long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      assertTrue(tookMillis >= 200, "100 ms each way, took " + tookMillis);
    }
  }

  @Test
  void holdNewConnectionsHoldsTheFirstBytesOfConnectionsOpenedAfterOnly() throws IOException {
    try (Socket before = connect()) {
      assertEquals("warm", roundTrip(before, "warm"));
      proxy.holdNewConnections(60_000);
      try (Socket after = connect()) {
        after.getOutputStream().write('x');
        after.setSoTimeout(500);
        assertThrows(SocketTimeoutException.class, () -> after.getInputStream().read());
      }
      assertEquals("old", roundTrip(before, "old"));
      proxy.holdNewConnections(0);
      try (Socket next = connect()) {
        assertEquals("next", roundTrip(next, "next"));
      }
    }
  }
}
