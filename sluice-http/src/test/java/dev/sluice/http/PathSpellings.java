package dev.sluice.http;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/** How a client may spell a path segment, for the path tests here and end to end. */
public final class PathSpellings {

  /**
   * A {@code {capture}} or {@code *} segment spelled as path structure, each of which once reached
   * a Jersey resource while no rule counted it.
   */
  public static final List<String> STRUCTURE =
      List.of(
          "..",
          ".",
          "%2e%2e",
          "%2e",
          ".%2e",
          "%3B",
          "%3Bx",
          "%2F",
          "x%2F..",
          "%2E%2E%2f",
          "..%2F..%2F..",
          "%2e%2e%2F%2e%2e%2F%2e%2e");

  private PathSpellings() {}

  /**
   * {@code value} as one segment of a request path: every character a path cannot hold raw is
   * percent-encoded (UTF-8, in upper or lower hex by {@code r}), and one in {@code 1/oneIn} of the
   * others is too.
   */
  public static String encode(String value, Random r, int oneIn) {
    StringBuilder b = new StringBuilder();
    value
        .codePoints()
        .forEach(
            cp -> {
              String ch = Character.toString(cp);
              boolean mustEncode = !ch.matches("[A-Za-z0-9._~=+-]");
              if (mustEncode || r.nextInt(oneIn) == 0) {
                for (byte x : ch.getBytes(StandardCharsets.UTF_8)) {
                  String hex = String.format(Locale.ROOT, "%02X", x & 0xff);
                  b.append('%').append(r.nextBoolean() ? hex : hex.toLowerCase(Locale.ROOT));
                }
              } else {
                b.append(ch);
              }
            });
    return b.toString();
  }
}
