package dev.sluice.http;

import java.util.Arrays;

/**
 * An IPv4 or IPv6 network, and the address literals it is made of. Parses literals by hand, so
 * nothing here ever asks DNS (a name, or {@code 999.1.1.1}, is simply not an address). Immutable.
 */
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
        throw new IllegalArgumentException(
            "bad CIDR '" + text + "': prefix length is not a number");
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
    int full = bits / 8;
    for (int i = 0; i < full; i++) {
      if (address[i] != network[i]) {
        return false;
      }
    }
    int rest = bits % 8;
    return rest == 0 || (address[full] & (0xff << (8 - rest)) & 0xff) == (network[full] & 0xff);
  }

  /**
   * The bytes of an IPv4 or IPv6 literal (brackets and an IPv6 zone allowed), 4 bytes for IPv4 and
   * for an IPv4-mapped IPv6 address; null if it is not a literal. Never resolves a name.
   */
  static byte[] parseAddress(String s) {
    if (s == null || s.isEmpty() || s.length() > 64) {
      return null;
    }
    if (s.charAt(0) == '[') {
      if (s.charAt(s.length() - 1) != ']') {
        return null;
      }
      s = s.substring(1, s.length() - 1);
    }
    if (s.indexOf(':') < 0) {
      return parseV4(s, 0, s.length());
    }
    int zone = s.indexOf('%');
    byte[] v6 = parseV6(zone < 0 ? s : s.substring(0, zone));
    return v6 == null ? null : v4Mapped(v6);
  }

  /** Four decimal octets 0–255 without leading zeros (which some parsers read as octal). */
  private static byte[] parseV4(String s, int from, int to) {
    byte[] out = new byte[4];
    int part = 0;
    int i = from;
    while (part < 4) {
      int start = i;
      int v = 0;
      while (i < to && s.charAt(i) >= '0' && s.charAt(i) <= '9' && i - start < 3) {
        v = v * 10 + (s.charAt(i) - '0');
        i++;
      }
      int len = i - start;
      if (len == 0 || v > 255 || (len > 1 && s.charAt(start) == '0')) {
        return null;
      }
      out[part++] = (byte) v;
      if (part < 4) {
        if (i >= to || s.charAt(i) != '.') {
          return null;
        }
        i++;
      }
    }
    return i == to ? out : null;
  }

  private static byte[] parseV6(String s) {
    int[] groups = new int[8];
    int n = 0;
    int gap = -1;
    int i = 0;
    int len = s.length();
    if (s.startsWith("::")) {
      gap = 0;
      i = 2;
      if (len == 2) {
        return new byte[16];
      }
    } else if (s.startsWith(":")) {
      return null;
    }
    while (i < len) {
      if (n == 8) {
        return null;
      }
      int start = i;
      int v = 0;
      while (i < len && Character.digit(s.charAt(i), 16) >= 0 && i - start < 4) {
        v = v * 16 + Character.digit(s.charAt(i), 16);
        i++;
      }
      if (i < len && s.charAt(i) == '.') {
        // An IPv4 tail fills the last two groups.
        byte[] v4 = n <= 6 ? parseV4(s, start, len) : null;
        if (v4 == null) {
          return null;
        }
        groups[n++] = ((v4[0] & 0xff) << 8) | (v4[1] & 0xff);
        groups[n++] = ((v4[2] & 0xff) << 8) | (v4[3] & 0xff);
        i = len;
        break;
      }
      if (i == start) {
        return null;
      }
      groups[n++] = v;
      if (i == len) {
        break;
      }
      if (s.charAt(i) != ':') {
        return null;
      }
      i++;
      if (i < len && s.charAt(i) == ':') {
        if (gap >= 0) {
          return null;
        }
        gap = n;
        i++;
        if (i == len) {
          break;
        }
      } else if (i == len) {
        return null;
      }
    }
    if (gap < 0 ? n != 8 : n > 7) {
      return null;
    }
    byte[] out = new byte[16];
    int tail = n - (gap < 0 ? n : gap);
    for (int g = 0; g < n; g++) {
      int at = gap >= 0 && g >= gap ? 8 - tail + (g - gap) : g;
      out[2 * at] = (byte) (groups[g] >>> 8);
      out[2 * at + 1] = (byte) groups[g];
    }
    return out;
  }

  /** Normalizes an IPv4-mapped IPv6 address to its IPv4 form. */
  private static byte[] v4Mapped(byte[] b) {
    for (int i = 0; i < 10; i++) {
      if (b[i] != 0) {
        return b;
      }
    }
    if (b[10] == (byte) 0xff && b[11] == (byte) 0xff) {
      return Arrays.copyOfRange(b, 12, 16);
    }
    return b;
  }

  static byte[] mask(byte[] address, int bits) {
    byte[] out = address.clone();
    for (int i = 0; i < out.length; i++) {
      int keep = Math.max(0, Math.min(8, bits - i * 8));
      out[i] &= (byte) (0xff << (8 - keep));
    }
    return out;
  }

  /**
   * One spelling per address: dotted decimal for IPv4, RFC 5952 for IPv6 (lower case, no leading
   * zeros, the longest run of two or more zero groups written {@code ::}).
   */
  static String format(byte[] a) {
    StringBuilder sb = new StringBuilder(39);
    if (a.length == 4) {
      for (int i = 0; i < 4; i++) {
        if (i > 0) {
          sb.append('.');
        }
        sb.append(a[i] & 0xff);
      }
      return sb.toString();
    }
    int bestStart = -1;
    int bestLen = 1;
    for (int g = 0; g < 8; ) {
      if (group(a, g) != 0) {
        g++;
        continue;
      }
      int start = g;
      while (g < 8 && group(a, g) == 0) {
        g++;
      }
      if (g - start > bestLen) {
        bestStart = start;
        bestLen = g - start;
      }
    }
    for (int g = 0; g < 8; g++) {
      if (g == bestStart) {
        sb.append("::");
        g += bestLen - 1;
        continue;
      }
      if (sb.length() > 0 && sb.charAt(sb.length() - 1) != ':') {
        sb.append(':');
      }
      sb.append(Integer.toHexString(group(a, g)));
    }
    return sb.toString();
  }

  private static int group(byte[] a, int g) {
    return ((a[2 * g] & 0xff) << 8) | (a[2 * g + 1] & 0xff);
  }

  @Override
  public String toString() {
    return format(network) + "/" + bits;
  }
}
