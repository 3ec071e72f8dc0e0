package dev.sluice.store.redis;

import dev.sluice.spi.CounterUpdate;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

/**
 * Redis keys: {@code {prefix}:{identity}:{policy}:{period}:{window}} for a window, {@code
 * {prefix}:{identity}:{policy}:{period}:tat} for a running counter (one value whatever the window),
 * and {@code {prefix}:value:{name}} for a shared value. The identity is the key's hash tag (in
 * braces), so on a Redis Cluster every counter of one client, its previous windows and all its
 * rules, lives in one hash slot and one script counts them; different clients spread over the
 * slots. A policy, identity or name is written as it is only when every character is in a small
 * safe set (no ':', no braces, no spaces, no control characters, ASCII only) and it is at most 64
 * characters; otherwise it is replaced by {@code #} and the URL-safe Base64 of its SHA-256, so two
 * different values share a key only if SHA-256 collides, and no caller data can move a hash tag.
 */
final class Keys {

  private static final int MAX_RAW = 64;

  private final String prefix;

  Keys(String prefix) {
    if (prefix.isEmpty() || !safe(prefix) || prefix.length() > 32) {
      throw new IllegalArgumentException("prefix must be 1-32 characters of [A-Za-z0-9._~@/+=,-]");
    }
    this.prefix = prefix;
  }

  String prefix() {
    return prefix;
  }

  /** The key of the update's counter: its window's, or its running value's. */
  String key(CounterUpdate u) {
    return u.running() ? name(u) + "tat" : name(u) + u.window();
  }

  /**
   * The key without its window: {@code {prefix}:{identity}:{policy}:{period}:}, from the recent
   * ones when it is there: a counter comes back decision after decision, and its name (the safety
   * scan of its parts, an identity's SHA-256 and Base64, the concatenation) is then one lookup.
   */
  String name(CounterUpdate u) {
    return name(u.policy(), u.identity(), u.periodMillis());
  }

  /** {@link #name(CounterUpdate)} of the counter {@code (policy, identity, period)}. */
  String name(String policy, String identity, long period) {
    int hash = (policy.hashCode() * 31 + identity.hashCode()) * 31 + Long.hashCode(period);
    int slot = (hash * 0x9E3779B9) >>> (32 - NAME_SLOTS_LOG2);
    Name n = names[slot];
    if (n != null && n.period == period && n.identity.equals(identity) && n.policy.equals(policy)) {
      return n.name;
    }
    String name = prefix + ":{" + part(identity) + "}:" + part(policy) + ':' + period + ':';
    if (identity.length() + policy.length() <= MAX_CACHED) {
      names[slot] = new Name(policy, identity, period, name);
    }
    return name;
  }

  private static final int NAME_SLOTS_LOG2 = 14;

  /**
   * The longest policy and identity, together, whose name is kept: at worst 16,384 entries of 256
   * characters and a name of at most 200, about 10 MB (twice that for identities outside Latin-1).
   */
  private static final int MAX_CACHED = 256;

  /** Recent names; a slot is read without a lock and sees a whole entry or an older one. */
  private final Name[] names = new Name[1 << NAME_SLOTS_LOG2];

  /** A counter's policy, identity and period, and its name; immutable. */
  private record Name(String policy, String identity, long period, String name) {}

  /**
   * {@code name + window}: the key of a counter's window (its name from {@link #name}), or, with
   * {@link #RUNNING}, {@code name + "tat"}, its running value's; from the recent ones when it is
   * there, since a counter comes back many times in one window.
   */
  String key(String name, long window) {
    int slot = (name.hashCode() * 0x9E3779B9) >>> (32 - NAME_SLOTS_LOG2);
    WindowKey k = windowKeys[slot];
    if (k != null && k.window == window && k.name.equals(name)) {
      return k.key;
    }
    String key = window == RUNNING ? name + "tat" : name + window;
    windowKeys[slot] = new WindowKey(name, window, key);
    return key;
  }

  /** {@link #key(String, long)}'s window for a running counter's key. */
  static final long RUNNING = Long.MIN_VALUE;

  /**
   * Recent keys, one a name; a slot is read without a lock and sees a whole entry or an older one.
   * At worst 16,384 keys of at most 205 characters and their names, about 7 MB.
   */
  private final WindowKey[] windowKeys = new WindowKey[1 << NAME_SLOTS_LOG2];

  /** A counter's name, one of its windows (or {@link #RUNNING}), and its key; immutable. */
  private record WindowKey(String name, long window, String key) {}

  /** The key of a shared value. */
  String value(String name) {
    return prefix + ":value:{" + part(name) + '}';
  }

  /** Added to two periods when choosing a window's time to live: room for clock skew. */
  static final long TTL_SLACK_MILLIS = 10_000;

  /** A window's time to live: two periods plus slack, in milliseconds. */
  static long ttlMillis(long periodMillis) {
    long two = periodMillis > Long.MAX_VALUE / 4 ? Long.MAX_VALUE / 2 : 2 * periodMillis;
    return two + TTL_SLACK_MILLIS;
  }

  /**
   * The value itself when safe, short and not empty; else its digest. Either way at most 64
   * characters, and never empty: an empty hash tag ({@code {}}) would make Redis Cluster hash the
   * whole key, and a counter's two windows would fall in different slots.
   */
  static String part(String value) {
    return !value.isEmpty() && value.length() <= MAX_RAW && safe(value) ? value : digest(value);
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
