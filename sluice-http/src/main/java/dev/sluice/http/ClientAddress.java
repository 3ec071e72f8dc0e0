package dev.sluice.http;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Finds the client's address: the peer, unless the peer is a trusted proxy; then the one forwarding
 * header the proxies set ({@code X-Forwarded-For}, or {@code Forwarded} of RFC 7239), read right to
 * left, skipping trusted proxies. The other header is ignored, so a client cannot win by sending
 * the one the proxies do not overwrite; and headers from an untrusted peer are ignored, so a client
 * cannot spoof its address.
 *
 * <p>The answer has one spelling per client: IPv4 dotted decimal (an IPv4-mapped IPv6 address is
 * its IPv4 address), IPv6 in RFC 5952 form and cut to its {@code ipv6Prefix} (a /64 by default,
 * written {@code 2001:db8:1:2::/64}), since one IPv6 host commonly holds a whole /64. Immutable.
 */
final class ClientAddress {

  private final List<Cidr> trusted;
  private final ForwardedHeader header;
  private final int ipv6Prefix;

  ClientAddress(List<Cidr> trusted, ForwardedHeader header, int ipv6Prefix) {
    this.trusted = List.copyOf(trusted);
    this.header = header;
    this.ipv6Prefix = ipv6Prefix;
  }

  /** The client's identity for an {@code ip} key, or null when the request has no peer address. */
  String resolve(RequestInfo request) {
    String peer = request.remoteAddress().orElse(null);
    if (peer == null || peer.isEmpty()) {
      return null;
    }
    if (trusted.isEmpty() && canonicalIpv4(peer)) {
      return peer; // already the identity: nothing to parse, format or forward
    }
    byte[] hop = Cidr.parseAddress(ClientAddress.stripPort(peer));
    if (hop == null) {
      // Not an IP literal (a unix socket name, say): still one client, as the container named it.
      return peer;
    }
    if (!trusted.isEmpty() && isTrusted(hop)) {
      List<String> chain =
          header == ForwardedHeader.FORWARDED
              ? forwardedFor(request.headers("Forwarded"))
              : xForwardedFor(request.headers("X-Forwarded-For"));
      for (int i = chain.size() - 1; i >= 0; i--) {
        byte[] candidate = Cidr.parseAddress(stripPort(chain.get(i)));
        if (candidate == null) {
          // "unknown", an obfuscated name or junk: the last address we can vouch for is the client.
          break;
        }
        hop = candidate;
        if (!isTrusted(candidate)) {
          break;
        }
      }
    }
    return identity(hop);
  }

  /** Whether {@code s} is an IPv4 address as {@link Cidr#format} writes it: {@code 10.0.0.7}. */
  static boolean canonicalIpv4(String s) {
    int n = s.length();
    if (n < 7 || n > 15) {
      return false;
    }
    int parts = 0;
    int i = 0;
    while (i < n) {
      int from = i;
      int v = 0;
      while (i < n && s.charAt(i) >= '0' && s.charAt(i) <= '9') {
        v = v * 10 + (s.charAt(i) - '0');
        i++;
      }
      int len = i - from;
      if (len == 0 || len > 3 || v > 255 || (len > 1 && s.charAt(from) == '0')) {
        return false;
      }
      parts++;
      if (i < n) {
        if (s.charAt(i) != '.' || parts == 4) {
          return false;
        }
        i++;
        if (i == n) {
          return false;
        }
      }
    }
    return parts == 4;
  }

  private String identity(byte[] address) {
    if (address.length == 4 || ipv6Prefix == 128) {
      return Cidr.format(address);
    }
    return Cidr.format(Cidr.mask(address, ipv6Prefix)) + "/" + ipv6Prefix;
  }

  private boolean isTrusted(byte[] address) {
    for (Cidr c : trusted) {
      if (c.contains(address)) {
        return true;
      }
    }
    return false;
  }

  static List<String> xForwardedFor(List<String> headers) {
    List<String> out = new ArrayList<>();
    for (String h : headers) {
      for (String part : h.split(",", -1)) {
        if (!part.isBlank()) {
          out.add(part.trim());
        }
      }
    }
    return out;
  }

  static List<String> forwardedFor(List<String> headers) {
    List<String> out = new ArrayList<>();
    for (String h : headers) {
      for (String element : h.split(",", -1)) {
        for (String pair : element.split(";", -1)) {
          int eq = pair.indexOf('=');
          if (eq > 0 && pair.substring(0, eq).trim().toLowerCase(Locale.ROOT).equals("for")) {
            String v = pair.substring(eq + 1).trim();
            if (v.length() >= 2 && v.startsWith("\"") && v.endsWith("\"")) {
              v = v.substring(1, v.length() - 1);
            }
            out.add(v);
          }
        }
      }
    }
    return out;
  }

  /** {@code 1.2.3.4:80} → {@code 1.2.3.4}; {@code [::1]:80} → {@code ::1}; bare IPv6 unchanged. */
  static String stripPort(String s) {
    if (s.startsWith("[")) {
      int end = s.indexOf(']');
      return end > 0 ? s.substring(1, end) : s;
    }
    int colon = s.indexOf(':');
    if (colon > 0 && colon == s.lastIndexOf(':')) {
      return s.substring(0, colon);
    }
    return s;
  }
}
