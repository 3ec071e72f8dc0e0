package dev.sluice.http;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.net.InetAddress;
import java.util.List;
import org.junit.jupiter.api.Test;

class ClientAddressTest {

  private static final List<Cidr> PROXIES =
      List.of(Cidr.parse("10.0.0.0/8"), Cidr.parse("::1/128"));
  private final ClientAddress clients =
      new ClientAddress(PROXIES, ForwardedHeader.X_FORWARDED_FOR, 64);
  private final ClientAddress forwarded = new ClientAddress(PROXIES, ForwardedHeader.FORWARDED, 64);

  @Test
  void anUntrustedPeerIsTheClientWhateverItsHeadersSay() {
    assertEquals(
        "203.0.113.9",
        clients.resolve(
            TestRequest.get("/")
                .from("203.0.113.9")
                .header("X-Forwarded-For", "1.2.3.4")
                .header("Forwarded", "for=5.6.7.8")));
  }

  @Test
  void behindATrustedProxyTheChainIsReadRightToLeftSkippingProxies() {
    assertEquals(
        "198.51.100.7",
        clients.resolve(
            TestRequest.get("/")
                .from("10.0.0.2")
                .header("X-Forwarded-For", "6.6.6.6, 198.51.100.7, 10.0.0.5")));
    assertEquals(
        "198.51.100.7",
        clients.resolve(
            TestRequest.get("/")
                .from("10.0.0.2")
                .header("X-Forwarded-For", "6.6.6.6")
                .header("X-Forwarded-For", "198.51.100.7")));
  }

  @Test
  void aClientSentForwardedHeaderIsIgnoredBehindAProxyThatAppendsXForwardedFor() {
    // The proxy appended the real client to X-Forwarded-For and passed the client's own Forwarded
    // on.
    for (int i = 0; i < 5; i++) {
      assertEquals(
          "198.51.100.4",
          clients.resolve(
              TestRequest.get("/")
                  .from("10.0.0.2")
                  .header("Forwarded", "for=203.0.113." + i)
                  .header("X-Forwarded-For", "198.51.100.4")));
    }
  }

  @Test
  void withForwardedConfiguredXForwardedForIsIgnoredAndItsSyntaxIsUnderstood() {
    assertEquals(
        "2001:db8::/64",
        forwarded.resolve(
            TestRequest.get("/")
                .from("::1")
                .header(
                    "Forwarded",
                    "for=1.1.1.1, for=\"[2001:db8::1]:4711\";proto=https, for=10.1.1.1")
                .header("X-Forwarded-For", "9.9.9.9")));
    assertEquals(
        "192.0.2.60",
        forwarded.resolve(
            TestRequest.get("/")
                .from("10.0.0.1")
                .header("Forwarded", "For=\"192.0.2.60:8080\";by=10.0.0.1")
                .header("X-Forwarded-For", "9.9.9.9")));
    assertEquals(
        "10.0.0.1",
        forwarded.resolve(
            TestRequest.get("/").from("10.0.0.1").header("X-Forwarded-For", "9.9.9.9")));
  }

  @Test
  void junkOrAllTrustedChainsFallBackToTheLastKnownHop() {
    assertEquals(
        "10.0.0.3",
        clients.resolve(
            TestRequest.get("/")
                .from("10.0.0.2")
                .header("X-Forwarded-For", "1.2.3.4, unknown, 10.0.0.3")));
    assertEquals(
        "10.0.0.4",
        clients.resolve(
            TestRequest.get("/").from("10.0.0.2").header("X-Forwarded-For", "10.0.0.4, 10.0.0.3")));
    assertEquals("10.0.0.2", clients.resolve(TestRequest.get("/").from("10.0.0.2")));
  }

  @Test
  void everySpellingOfOneAddressIsOneClient() {
    for (String s :
        List.of(
            "198.51.100.4",
            "::ffff:198.51.100.4",
            "::FFFF:c633:6404",
            "[::ffff:198.51.100.4]",
            "0:0:0:0:0:ffff:198.51.100.4")) {
      assertEquals("198.51.100.4", clients.resolve(TestRequest.get("/").from(s)), s);
    }
    ClientAddress exact = new ClientAddress(PROXIES, ForwardedHeader.X_FORWARDED_FOR, 128);
    for (String s :
        List.of(
            "2001:db8::1:0:0:1",
            "2001:DB8:0:0:1:0:0:1",
            "2001:0db8:0000:0000:0001:0000:0000:0001",
            "[2001:db8:0:0:1::1]",
            "2001:db8::1:0:0:1%eth0")) {
      assertEquals("2001:db8::1:0:0:1", exact.resolve(TestRequest.get("/").from(s)), s);
    }
  }

  @Test
  void ipv6ClientsAreKeyedByTheirPrefix() {
    assertEquals(
        "2001:db8:1:2::/64", clients.resolve(TestRequest.get("/").from("2001:db8:1:2:aaaa::1")));
    assertEquals(
        "2001:db8:1:2::/64",
        clients.resolve(TestRequest.get("/").from("2001:db8:1:2:ffff:ffff:ffff:ffff")));
    assertEquals(
        "2001:db8:1:3::/64", clients.resolve(TestRequest.get("/").from("2001:db8:1:3::1")));
    ClientAddress by48 = new ClientAddress(PROXIES, ForwardedHeader.X_FORWARDED_FOR, 48);
    assertEquals("2001:db8:1::/48", by48.resolve(TestRequest.get("/").from("2001:db8:1:3::1")));
  }

  @Test
  void addressParsingNeverAsksTheResolver() throws Exception {
    // src/test/resources/hosts (jdk.net.hosts.file) names these: a lookup would return an address.
    assertEquals("203.0.113.99", InetAddress.getByName("999.1.1.1").getHostAddress());
    assertNull(Cidr.parseAddress("999.1.1.1"));
    assertNull(Cidr.parseAddress("client.example"));
    assertEquals("999.1.1.1", clients.resolve(TestRequest.get("/").from("999.1.1.1")));
    assertEquals(
        "10.0.0.2",
        clients.resolve(
            TestRequest.get("/").from("10.0.0.2").header("X-Forwarded-For", "999.1.1.1")));
  }

  @Test
  void literalsParseStrictly() {
    assertArrayEquals(new byte[] {1, 2, 3, 4}, Cidr.parseAddress("1.2.3.4"));
    for (String bad :
        List.of(
            "1.2.3",
            "1.2.3.4.5",
            "01.2.3.4",
            "256.1.1.1",
            "1..2.3",
            "1:2:3:4:5:6:7:8:9",
            ":::",
            "1::2::3",
            "12345::",
            "::g",
            "1.2.3.4:",
            "")) {
      assertNull(Cidr.parseAddress(bad), bad);
    }
    assertEquals("::", Cidr.format(Cidr.parseAddress("::")));
    assertEquals("::1", Cidr.format(Cidr.parseAddress("0:0:0:0:0:0:0:1")));
    assertEquals("1::", Cidr.format(Cidr.parseAddress("1:0:0:0:0:0:0:0")));
    assertEquals("1:0:2::", Cidr.format(Cidr.parseAddress("1:0:2:0:0:0:0:0")));
    assertEquals("1:2:3:4:5:6:7:8", Cidr.format(Cidr.parseAddress("1:2:3:4:5:6:7:8")));
  }

  @Test
  void cidrsParseLiteralsOnly() {
    assertThrows(IllegalArgumentException.class, () -> Cidr.parse("example.com/8"));
    assertThrows(IllegalArgumentException.class, () -> Cidr.parse("10.0.0.0/33"));
    assertThrows(IllegalArgumentException.class, () -> Cidr.parse("10.0.0/8"));
    assertEquals("10.0.0.0/8", Cidr.parse("10.1.2.3/8").toString());
    assertEquals("2001:db8::/32", Cidr.parse("2001:db8:ff::1/32").toString());
  }

  @Test
  void aCanonicalIpv4PeerIsItsOwnIdentity() {
    for (String a : new String[] {"10.0.0.7", "192.0.2.255", "0.0.0.0", "255.255.255.255"}) {
      org.junit.jupiter.api.Assertions.assertTrue(ClientAddress.canonicalIpv4(a), a);
      assertEquals(Cidr.format(Cidr.parseAddress(a)), a);
    }
    for (String a :
        new String[] {
          "10.0.0.07",
          "10.0.0",
          "10.0.0.7.",
          "10.0.0.256",
          "10..0.7",
          "1.2.3.4:80",
          "::1",
          "a.b.c.d",
          "1.2.3.4.5",
          ""
        }) {
      org.junit.jupiter.api.Assertions.assertFalse(ClientAddress.canonicalIpv4(a), a);
    }
  }
}
