package dev.sluice.testkit;

import java.util.ArrayList;
import java.util.List;

/**
 * A real Redis Cluster for tests: {@code masters} masters, each with one replica, on free ports,
 * joined by {@code redis-cli --cluster create}; a master that dies is replaced by its replica after
 * the 1 s node timeout. {@link #close} stops every node.
 */
public final class RedisCluster implements AutoCloseable {

  private final List<RedisServer> nodes = new ArrayList<>();

  private RedisCluster() {}

  public static RedisCluster start(int masters) {
    RedisCluster c = new RedisCluster();
    try {
      for (int i = 0; i < 2 * masters; i++) {
        c.nodes.add(RedisServer.clusterNode());
      }
      List<String> args = new ArrayList<>(List.of("--cluster", "create"));
      for (RedisServer n : c.nodes) {
        args.add(n.address());
      }
      args.addAll(List.of("--cluster-replicas", "1", "--cluster-yes"));
      String out = c.nodes.get(0).cli(args.toArray(new String[0]));
      if (!out.contains("All 16384 slots covered")) {
        throw new IllegalStateException("cluster create failed: " + out);
      }
      c.awaitOk();
      return c;
    } catch (RuntimeException e) {
      c.close();
      throw e;
    }
  }

  /**
   * Waits until every node says the cluster is ok and every replica has synced with its master, so
   * it can replace it (a condition with a deadline).
   */
  public void awaitOk() {
    long deadline = System.nanoTime() + 20_000_000_000L;
    for (RedisServer n : nodes) {
      while (!n.cli("CLUSTER", "INFO").contains("cluster_state:ok")
          || (n.cli("ROLE").startsWith("slave")
              && !n.cli("INFO", "replication").contains("master_link_status:up"))) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("cluster not ok: " + n.cli("CLUSTER", "INFO"));
        }
        try {
          Thread.sleep(50); // polling a starting cluster
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException(e);
        }
      }
    }
  }

  /** Every node, masters and replicas. */
  public List<RedisServer> nodes() {
    return nodes;
  }

  /** Some nodes as {@code host:port,host:port}, to seed a client. */
  public String seeds() {
    return nodes.get(0).address() + "," + nodes.get(1).address();
  }

  /** The node that is master of the slot {@code key} hashes to. */
  public RedisServer masterOf(String key) {
    int slot = Integer.parseInt(nodes.get(0).cli("CLUSTER", "KEYSLOT", key).trim());
    for (RedisServer n : nodes) {
      for (String line : n.cli("CLUSTER", "NODES").lines().toList()) {
        if (line.contains("myself") && line.contains("master") && serves(line, slot)) {
          return n;
        }
      }
    }
    throw new IllegalStateException("no master serves slot " + slot);
  }

  private static boolean serves(String nodesLine, int slot) {
    List<String> parts = java.util.regex.Pattern.compile(" ").splitAsStream(nodesLine).toList();
    for (int i = 8; i < parts.size(); i++) {
      String r = parts.get(i);
      if (r.startsWith("[")) {
        continue;
      }
      int dash = r.indexOf('-');
      int lo = Integer.parseInt(dash < 0 ? r : r.substring(0, dash));
      int hi = Integer.parseInt(dash < 0 ? r : r.substring(dash + 1));
      if (slot >= lo && slot <= hi) {
        return true;
      }
    }
    return false;
  }

  @Override
  public void close() {
    for (RedisServer n : nodes) {
      n.close();
    }
  }
}
