package dev.sluice;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

class ClientAddressTest {

  private final ClientAddress clients = new ClientAddress(List.of(Cidr.parse("10.0.0.0/8"), Cidr.parse("::1/128")));

  @Test
  void anUntrustedPeerIsTheClientWhateverItsHeadersSay() {
    assertEquals("203.0.113.9", clients.resolve(TestRequest.get("/").from("203.0.113.9")
        .header("X-Forwarded-For", "1.2.3.4").header("Forwarded", "for=5.6.7.8")));
  }

  @Test
  void behindATrustedProxyTheChainIsReadRightToLeftSkippingProxies() {
    assertEquals("198.51.100.7", clients.resolve(TestRequest.get("/").from("10.0.0.2")
        .header("X-Forwarded-For", "6.6.6.6, 198.51.100.7, 10.0.0.5")));
    assertEquals("198.51.100.7", clients.resolve(TestRequest.get("/").from("10.0.0.2")
        .header("X-Forwarded-For", "6.6.6.6").header("X-Forwarded-For", "198.51.100.7")));
  }

  @Test
  void forwardedWinsOverXForwardedForAndItsSyntaxIsUnderstood() {
    assertEquals("2001:db8::1", clients.resolve(TestRequest.get("/").from("::1")
        .header("Forwarded", "for=1.1.1.1, for=\"[2001:db8::1]:4711\";proto=https, for=10.1.1.1")
        .header("X-Forwarded-For", "9.9.9.9")));
    assertEquals("192.0.2.60", clients.resolve(TestRequest.get("/").from("10.0.0.1")
        .header("Forwarded", "For=\"192.0.2.60:8080\";by=10.0.0.1")));
  }

  @Test
  void junkOrAllTrustedChainsFallBackToTheLastKnownHop() {
    assertEquals("10.0.0.3", clients.resolve(TestRequest.get("/").from("10.0.0.2")
        .header("X-Forwarded-For", "1.2.3.4, unknown, 10.0.0.3")));
    assertEquals("10.0.0.4", clients.resolve(TestRequest.get("/").from("10.0.0.2")
        .header("X-Forwarded-For", "10.0.0.4, 10.0.0.3")));
    assertEquals("10.0.0.2", clients.resolve(TestRequest.get("/").from("10.0.0.2")));
  }

  @Test
  void cidrsParseLiteralsOnly() {
    assertThrows(IllegalArgumentException.class, () -> Cidr.parse("example.com/8"));
    assertThrows(IllegalArgumentException.class, () -> Cidr.parse("10.0.0.0/33"));
    assertThrows(IllegalArgumentException.class, () -> Cidr.parse("10.0.0/8"));
    assertEquals("10.0.0.0/8", Cidr.parse("10.1.2.3/8").toString());
  }
}
