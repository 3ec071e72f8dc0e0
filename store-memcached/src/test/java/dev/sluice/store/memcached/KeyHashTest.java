package dev.sluice.store.memcached;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.spi.CounterUpdate;
import java.lang.reflect.Proxy;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.spy.memcached.ConnectionFactoryBuilder;
import net.spy.memcached.DefaultHashAlgorithm;
import net.spy.memcached.HashAlgorithm;
import net.spy.memcached.KetamaNodeLocator;
import net.spy.memcached.MemcachedNode;
import net.spy.memcached.NodeLocator;
import org.junit.jupiter.api.Test;

/**
 * {@link KeyHash} places the store's keys on spymemcached's consistent-hashing ring as evenly as
 * Ketama's MD5, moves as few of them when a server joins, and never changes.
 */
class KeyHashTest {

  private static final Keys KEYS = new Keys("sluice");

  /** A server of the ring: only its address is read. */
  private static MemcachedNode node(int port) {
    InetSocketAddress address = new InetSocketAddress("10.0.0." + port % 250, port);
    return (MemcachedNode)
        Proxy.newProxyInstance(
            KeyHashTest.class.getClassLoader(),
            new Class<?>[] {MemcachedNode.class},
            (proxy, method, args) ->
                switch (method.getName()) {
                  case "getSocketAddress" -> address;
                  case "toString" -> address.toString();
                  case "hashCode" -> System.identityHashCode(proxy);
                  case "equals" -> proxy == args[0];
                  default -> throw new UnsupportedOperationException(method.getName());
                });
  }

  private static List<MemcachedNode> nodes(int n) {
    List<MemcachedNode> nodes = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      nodes.add(node(11211 + i));
    }
    return nodes;
  }

  /**
   * Keys as rules make them: API keys and addresses (digested, for their ':'), and user names in
   * sequence (as they are); three periods, a few windows.
   */
  private static List<String> keys(int n, long seed) {
    Random r = new Random(seed);
    List<String> keys = new ArrayList<>(n);
    String[] rules = {"per-key", "per-key-minute", "per-address"};
    long[] periods = {1000, 60_000, 1000};
    for (int i = 0; i < n; i++) {
      int rule = r.nextInt(3);
      String identity =
          switch (i % 3) {
            case 0 -> "ip:10." + r.nextInt(256) + "." + r.nextInt(256) + "." + r.nextInt(256);
            case 1 -> "header:X-Api-Key=k-" + r.nextInt(1_000_000);
            default -> "user-" + i;
          };
      long window = 1_795_742_400L / (periods[rule] / 1000) + r.nextInt(5);
      keys.add(KEYS.key(new CounterUpdate(rules[rule], identity, periods[rule], window, 1)));
    }
    return keys;
  }

  private static Map<MemcachedNode, Integer> placed(KetamaNodeLocator ring, List<String> keys) {
    Map<MemcachedNode, Integer> counts = new HashMap<>();
    for (String k : keys) {
      counts.merge(ring.getPrimary(k), 1, Integer::sum);
    }
    return counts;
  }

  /**
   * The largest share of the keys on one server, over an even share, averaged over ten rings of
   * {@code servers} addresses.
   */
  private static double worst(HashAlgorithm hash, int servers, List<String> keys) {
    double sum = 0;
    for (int ring = 0; ring < 10; ring++) {
      List<MemcachedNode> nodes = new ArrayList<>();
      for (int i = 0; i < servers; i++) {
        nodes.add(node(12_000 + 37 * ring + i));
      }
      Map<MemcachedNode, Integer> counts = placed(new KetamaNodeLocator(nodes, hash), keys);
      assertEquals(servers, counts.size(), "every server holds keys");
      int most = counts.values().stream().mapToInt(Integer::intValue).max().orElseThrow();
      sum += most / ((double) keys.size() / servers);
    }
    return sum / 10;
  }

  @Test
  void keysAreSpreadAsEvenlyAsKetamasMd5() {
    // Both place a server at 160 points; FNV-1a without the finalizer, or String.hashCode, leave
    // the fullest of 5 servers with 1.5 to 2 times its share.
    List<String> keys = keys(30_000, 1);
    for (int servers : new int[] {2, 3, 5, 8}) {
      double ours = worst(KeyHash.INSTANCE, servers, keys);
      double md5 = worst(DefaultHashAlgorithm.KETAMA_HASH, servers, keys);
      assertTrue(
          ours <= md5 + 0.03,
          servers + " servers: the fullest holds " + ours + "× its share (MD5: " + md5 + "×)");
    }
  }

  @Test
  void aServerJoiningTakesAboutItsShareAndMovesNothingElse() {
    List<String> keys = keys(40_000, 2);
    List<MemcachedNode> three = nodes(3);
    List<MemcachedNode> four = new ArrayList<>(three);
    four.add(node(11214));
    KetamaNodeLocator before = new KetamaNodeLocator(three, KeyHash.INSTANCE);
    KetamaNodeLocator after = new KetamaNodeLocator(four, KeyHash.INSTANCE);
    int moved = 0;
    for (String k : keys) {
      MemcachedNode was = before.getPrimary(k);
      MemcachedNode is = after.getPrimary(k);
      if (was != is) {
        assertEquals(four.get(3), is, "a key moves only to the new server");
        moved++;
      }
    }
    double share = moved / (double) keys.size();
    assertTrue(share > 0.15 && share < 0.35, "the fourth server took " + share);
  }

  /**
   * With one server the store's client places keys without the ring, and where the ring would: on
   * that server. With two it keeps the ring.
   */
  @Test
  void oneServerTakesEveryKeyAsTheRingWouldPlaceIt() {
    var factory =
        Wakeups.factory(
            new ConnectionFactoryBuilder()
                .setLocatorType(ConnectionFactoryBuilder.Locator.CONSISTENT)
                .setHashAlg(KeyHash.INSTANCE)
                .build());
    List<MemcachedNode> one = nodes(1);
    NodeLocator locator = factory.createLocator(one);
    KetamaNodeLocator ring = new KetamaNodeLocator(one, KeyHash.INSTANCE);
    for (String key : keys(20_000, 7)) {
      assertSame(ring.getPrimary(key), locator.getPrimary(key), key);
    }
    assertTrue(locator instanceof OneNodeLocator, "one: no ring");
    assertEquals(one, List.copyOf(locator.getAll()));
    assertEquals(
        one.get(0).getSocketAddress(),
        locator.getReadonlyCopy().getPrimary("k").getSocketAddress(),
        "the read-only copy's");
    assertThrows(UnsupportedOperationException.class, () -> locator.updateLocator(nodes(2)));
    assertTrue(factory.createLocator(nodes(2)) instanceof KetamaNodeLocator, "two: the ring");
  }

  @Test
  void theHashNeverChanges() {
    // A fleet's instances must place keys alike across releases: these values are the contract.
    assertEquals(3_130_599_718L, KeyHash.INSTANCE.hash(""));
    assertEquals(1_225_964_688L, KeyHash.INSTANCE.hash("sluice:per-key:k-1:1000:w1.1795742400"));
    assertEquals(2_094_601_149L, KeyHash.INSTANCE.hash("10.0.0.1:11211-0"));
  }

  @Property
  void everyKeyIsOnTheRingsRange(@ForAll String key) {
    long h = KeyHash.INSTANCE.hash(key);
    assertTrue(h >= 0 && h <= 0xffffffffL, key + " -> " + h);
  }
}
