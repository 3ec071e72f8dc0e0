package dev.sluice.store.memcached;

import dev.sluice.spi.CounterUpdate;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

/**
 * Memcached keys {@code {prefix}:{rule}:{identity}:{period}:{window}}, and {@code
 * {prefix}:{rule}:{identity}:{period}:tat} for a running counter (one value whatever the window). A
 * rule or identity is written as it is only when every character is in a small safe set (no ':', no
 * spaces, no control characters, ASCII only) and the key stays within 250 bytes; otherwise it is
 * replaced by {@code #} and the URL-safe Base64 of its SHA-256, so two different values share a key
 * only if SHA-256 collides. A raw value never starts with '#', so raw and digested values never
 * meet.
 */
final class Keys {

  static final int MAX_KEY_BYTES = 250;
  private static final int MAX_RAW = 64;

  private final String prefix;

  Keys(String prefix) {
    if (prefix.isEmpty() || !safe(prefix) || prefix.length() > 32) {
      throw new IllegalArgumentException("prefix must be 1-32 characters of [A-Za-z0-9._~@/+=,-]");
    }
    this.prefix = prefix;
  }

  /** The key of the update's counter: its window's, or its running value's. */
  String key(CounterUpdate u) {
    String name = name(u);
    return u.running() ? name + "tat" : name + u.window();
  }

  /** The key without its window: {@code {prefix}:{rule}:{identity}:{period}:}. */
  String name(CounterUpdate u) {
    return prefix + ':' + part(u.rule()) + ':' + part(u.identity()) + ':' + u.periodMillis() + ':';
  }

  /** The value itself when safe and short; else its digest. Either way at most 64 characters. */
  static String part(String value) {
    return value.length() <= MAX_RAW && safe(value) ? value : digest(value);
  }

  static boolean safe(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      boolean ok =
          (c >= 'a' && c <= 'z')
              || (c >= 'A' && c <= 'Z')
              || (c >= '0' && c <= '9')
              || c == '.'
              || c == '_'
              || c == '-'
              || c == '~'
              || c == '@'
              || c == '/'
              || c == '+'
              || c == '='
              || c == ',';
      if (!ok) {
        return false;
      }
    }
    return true;
  }

  static String digest(String value) {
    try {
      byte[] d =
          MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8));
      return '#' + Base64.getUrlEncoder().withoutPadding().encodeToString(d);
    } catch (NoSuchAlgorithmException e) {
      throw new AssertionError("SHA-256 is required of every JVM", e);
    }
  }
}
