package dev.sluice.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class CounterKeyTest {

  /** 1,024 keys of one policy and period whose identities share one hash. */
  private static List<CounterKey> colliding(String policy, long period) {
    List<CounterKey> out = new ArrayList<>();
    for (String identity : CollidingIdentities.of(10)) {
      out.add(new CounterKey().set(policy, identity, period).copy());
    }
    return out;
  }

  @Test
  void keysThatShareAHashAreOrderedAsTheyAreEqual() {
    List<CounterKey> keys = new ArrayList<>(colliding("r", 1_000));
    keys.addAll(colliding("r", 60_000));
    keys.addAll(colliding("s", 1_000));
    assertEquals(
        3, keys.stream().mapToInt(CounterKey::hashCode).distinct().count(), "one hash per group");
    for (int i = 0; i < keys.size(); i += 7) {
      for (int j = 0; j < keys.size(); j += 5) {
        CounterKey a = keys.get(i);
        CounterKey b = keys.get(j);
        int ab = Integer.signum(a.compareTo(b));
        assertEquals(a.equals(b), ab == 0, a.identity() + " vs " + b.identity());
        assertEquals(-ab, Integer.signum(b.compareTo(a)), "antisymmetric");
      }
    }
    CounterKey probe = new CounterKey().set("r", keys.get(3).identity(), 1_000);
    assertEquals(0, probe.compareTo(keys.get(3)), "a reused lookup key orders as its stored copy");
    assertTrue(probe.compareTo(keys.get(1_024 + 3)) < 0, "then by period");
  }
}
