package dev.sluice.store.memcached;

import dev.sluice.spi.CounterUpdate;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

/**
 * Memcached keys {@code {prefix}:{policy}:{identity}:{period}:w1.{window}}, and {@code
 * {prefix}:{policy}:{identity}:{period}:tat1} for a running counter (one value whatever the
 * window). {@code w1} and {@code tat1} name the encoding of the value ({@link #WINDOW_FORMAT},
 * {@link #RUNNING_FORMAT}): a release that changes how a value is encoded bumps its version, so
 * during a rolling deploy instances of two releases count in separate keys and never read the
 * other's values as their own (each budget starts from zero once, at the deploy). A policy or
 * identity is written as it is only when every character is in a small safe set (no ':', no spaces,
 * no control characters, ASCII only) and the key stays within 250 bytes; otherwise it is replaced
 * by {@code #} and the URL-safe Base64 of its SHA-256, so two different values share a key only if
 * SHA-256 collides. A raw value never starts with '#', so raw and digested values never meet.
 */
final class Keys {

  static final int MAX_KEY_BYTES = 250;
  private static final int MAX_RAW = 64;

  /** The encoding of a window's count: a plain count of permits, an 8-byte decimal counter. */
  static final String WINDOW_FORMAT = "w1";

  /**
   * The encoding of a running counter: a token bucket's theoretical arrival time, nanoseconds since
   * 2020-01-01.
   */
  static final String RUNNING_FORMAT = "tat1";

  private final String prefix;

  Keys(String prefix) {
    if (prefix.isEmpty() || !safe(prefix) || prefix.length() > 32) {
      throw new IllegalArgumentException("prefix must be 1-32 characters of [A-Za-z0-9._~@/+=,-]");
    }
    this.prefix = prefix;
  }

  /** The key of the update's counter: its window's, or its running value's. */
  String key(CounterUpdate u) {
    return u.running() ? counter(u) + RUNNING_FORMAT : named(u).key();
  }

  /**
   * A window counter's name, its key without its window ({@code
   * {prefix}:{policy}:{identity}:{period}:w1.}), and its key in one window; immutable, so a slot
   * read without a lock sees one whole.
   */
  record Named(
      String policy, String identity, long periodMillis, String name, long window, String key) {

    /** When the window counted last began: an hour's counter's began before a second's. */
    long start() {
      return window * periodMillis;
    }

    boolean names(String policy, String identity, long periodMillis) {
      return this.periodMillis == periodMillis
          && this.identity.equals(identity)
          && this.policy.equals(policy);
    }
  }

  /** 4,096 pairs of slots in {@link #named}. */
  private static final int NAMED_BITS = 13;

  /**
   * Identities kept in {@link #named} are at most this long; a longer one (a bearer token) is named
   * anew each time, so the table holds at most a few megabytes.
   */
  private static final int MAX_NAMED_IDENTITY = 128;

  /**
   * Recent counters' names and keys. The same counters come back decision after decision and sync
   * after sync, and building a name (checking and joining its parts) costs more than the rest of
   * its {@code incr}'s queueing on this side; the same {@code String} each time also keeps its hash
   * for the previous counts' table.
   */
  private final Named[] named = new Named[1 << NAMED_BITS];

  /** The update's window counter's name and key, from the recent ones when there. */
  Named named(CounterUpdate u) {
    String policy = u.policy();
    String identity = u.identity();
    long period = u.periodMillis();
    if (identity.length() > MAX_NAMED_IDENTITY) {
      String name = counter(u) + WINDOW_FORMAT + '.';
      return new Named(policy, identity, period, name, u.window(), name + u.window());
    }
    int h = (identity.hashCode() * 31 + policy.hashCode()) * 31 + Long.hashCode(period);
    // Two slots a counter may be in: a pair, so two busy counters of one slot both stay.
    int first = ((h * 0x9E3779B9) >>> (Integer.SIZE - NAMED_BITS)) & ~1;
    Named a = named[first];
    Named b = named[first + 1];
    int slot;
    Named n;
    if (a != null && a.names(policy, identity, period)) {
      slot = first;
      n = a;
    } else if (b != null && b.names(policy, identity, period)) {
      slot = first + 1;
      n = b;
    } else {
      // A new counter takes an empty slot, else the one whose window was counted longest ago.
      slot = (a == null || (b != null && a.start() <= b.start())) ? first : first + 1;
      n = null;
    }
    long window = u.window();
    if (n != null && n.window() == window) {
      return n;
    }
    String name = n != null ? n.name() : counter(u) + WINDOW_FORMAT + '.';
    n = new Named(policy, identity, period, name, window, name + window);
    named[slot] = n;
    return n;
  }

  private String counter(CounterUpdate u) {
    return prefix
        + ':'
        + part(u.policy())
        + ':'
        + part(u.identity())
        + ':'
        + u.periodMillis()
        + ':';
  }

  /** The value itself when safe and short; else its digest. Either way at most 64 characters. */
  static String part(String value) {
    return value.length() <= MAX_RAW && safe(value) ? value : digested(value);
  }

  /**
   * Recent digests: an identity such as {@code header:X-Api-Key=k} comes back request after
   * request.
   */
  private static final Digested[] DIGESTS = new Digested[4096];

  /**
   * A value and its digest; immutable, so a slot read without a lock sees both or an older pair.
   */
  private record Digested(String value, String digest) {}

  /**
   * {@link #digest} of {@code value}, from the recent ones when it is there, rather than a SHA-256
   * and its Base64 on every counter of every decision and of every two-layer push.
   */
  static String digested(String value) {
    int slot = (value.hashCode() * 0x9E3779B9) >>> 20;
    Digested d = DIGESTS[slot];
    if (d != null && d.value.equals(value)) {
      return d.digest;
    }
    String digest = digest(value);
    DIGESTS[slot] = new Digested(value, digest);
    return digest;
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
