package dev.sluice;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Finds the client's address: the peer, unless the peer is a trusted proxy; then the {@code
 * Forwarded} (RFC 7239) or else {@code X-Forwarded-For} chain, read right to left, skipping trusted
 * proxies. Headers from an untrusted peer are ignored, so a client cannot spoof its address.
 * Immutable.
 */
final class ClientAddress {

  private final List<Cidr> trusted;

  ClientAddress(List<Cidr> trusted) {
    this.trusted = List.copyOf(trusted);
  }

  String resolve(RequestInfo request) {
    String peer = request.remoteAddress();
    if (peer == null || trusted.isEmpty() || !isTrusted(peer)) {
      return peer;
    }
    List<String> chain = forwardedFor(request.headers("Forwarded"));
    if (chain.isEmpty()) {
      chain = xForwardedFor(request.headers("X-Forwarded-For"));
    }
    String hop = peer;
    for (int i = chain.size() - 1; i >= 0; i--) {
      String candidate = stripPort(chain.get(i));
      if (Cidr.parseAddress(candidate) == null) {
        // "unknown", an obfuscated name or junk: the last address we can vouch for is the client.
        return hop;
      }
      if (!isTrusted(candidate)) {
        return candidate;
      }
      hop = candidate;
    }
    return hop;
  }

  private boolean isTrusted(String address) {
    byte[] b = Cidr.parseAddress(address);
    for (Cidr c : trusted) {
      if (c.contains(b)) {
        return true;
      }
    }
    return false;
  }

  static List<String> xForwardedFor(List<String> headers) {
    List<String> out = new ArrayList<>();
    for (String h : headers) {
      for (String part : h.split(",")) {
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
      for (String element : h.split(",")) {
        for (String pair : element.split(";")) {
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
