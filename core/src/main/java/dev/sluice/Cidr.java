package dev.sluice;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;

/** An IPv4 or IPv6 network; parses literals only, never asks DNS. Immutable. */
final class Cidr {

  private final byte[] network;
  private final int bits;

  private Cidr(byte[] network, int bits) {
    this.network = network;
    this.bits = bits;
  }

  /**
   * Parses {@code 10.0.0.0/8}, {@code ::1/128}, or an address alone (one host).
   *
   * @throws IllegalArgumentException if it is not one
   */
  static Cidr parse(String text) {
    String s = text.trim();
    int slash = s.indexOf('/');
    byte[] address = parseAddress(slash < 0 ? s : s.substring(0, slash));
    if (address == null) {
      throw new IllegalArgumentException("bad CIDR '" + text + "': not an IP address");
    }
    int bits = address.length * 8;
    if (slash >= 0) {
      try {
        bits = Integer.parseInt(s.substring(slash + 1));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("bad CIDR '" + text + "': prefix length is not a number");
      }
      if (bits < 0 || bits > address.length * 8) {
        throw new IllegalArgumentException("bad CIDR '" + text + "': prefix length out of range");
      }
    }
    return new Cidr(mask(address, bits), bits);
  }

  boolean contains(byte[] address) {
    if (address == null || address.length != network.length) {
      return false;
    }
    return Arrays.equals(mask(address, bits), network);
  }

  /** The bytes of an IPv4 or IPv6 literal (brackets allowed), or null if it is not one. */
  static byte[] parseAddress(String s) {
    if (s == null || s.isEmpty() || s.length() > 64) {
      return null;
    }
    if (s.startsWith("[") && s.endsWith("]")) {
      s = s.substring(1, s.length() - 1);
    }
    boolean v6 = s.indexOf(':') >= 0;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      boolean ok = (c >= '0' && c <= '9') || c == '.' || (v6 && (c == ':' || (c >= 'a' && c <= 'f')
          || (c >= 'A' && c <= 'F') || c == '%'));
      if (!ok) {
        return null;
      }
    }
    if (!v6 && s.chars().filter(c -> c == '.').count() != 3) {
      return null;
    }
    try {
      // A literal: InetAddress does no lookup for it.
      byte[] b = InetAddress.getByName(s).getAddress();
      return v4Mapped(b);
    } catch (UnknownHostException | SecurityException e) {
      return null;
    }
  }

  /** Normalizes an IPv4-mapped IPv6 address to its IPv4 form. */
  private static byte[] v4Mapped(byte[] b) {
    if (b.length == 16) {
      for (int i = 0; i < 10; i++) {
        if (b[i] != 0) {
          return b;
        }
      }
      if (b[10] == (byte) 0xff && b[11] == (byte) 0xff) {
        return Arrays.copyOfRange(b, 12, 16);
      }
    }
    return b;
  }

  private static byte[] mask(byte[] address, int bits) {
    byte[] out = address.clone();
    for (int i = 0; i < out.length; i++) {
      int keep = Math.max(0, Math.min(8, bits - i * 8));
      out[i] &= (byte) (0xff << (8 - keep));
    }
    return out;
  }

  @Override
  public String toString() {
    try {
      return InetAddress.getByAddress(network).getHostAddress() + "/" + bits;
    } catch (UnknownHostException e) {
      return Arrays.toString(network) + "/" + bits;
    }
  }
}
