package dev.sluice.spi;

import java.util.ArrayList;
import java.util.List;

/** Identities an attacker can choose so that their strings share one hash. */
public final class CollidingIdentities {

  private CollidingIdentities() {}

  /**
   * The {@code 2^blocks} strings of {@code blocks} two-letter blocks, each "Aa" or "BB": they hash
   * alike, so all of them share one {@link String#hashCode}.
   */
  public static List<String> of(int blocks) {
    List<String> out = new ArrayList<>(1 << blocks);
    for (int bits = 0; bits < 1 << blocks; bits++) {
      StringBuilder s = new StringBuilder(2 * blocks);
      for (int b = 0; b < blocks; b++) {
        s.append((bits >> b & 1) == 0 ? "Aa" : "BB");
      }
      out.add(s.toString());
    }
    return out;
  }
}
