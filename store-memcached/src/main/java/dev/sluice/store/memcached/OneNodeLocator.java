package dev.sluice.store.memcached;

import java.util.Collection;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import net.spy.memcached.MemcachedNode;
import net.spy.memcached.MemcachedNodeROImpl;
import net.spy.memcached.NodeLocator;

/**
 * Where every key goes when there is one server: to it. spymemcached asks its locator for each
 * operation it sends, and its consistent-hashing ring answers by hashing the key ({@link KeyHash})
 * and searching its points, though with one server every point is that server's. This answers the
 * same without either. A client with several servers keeps the ring.
 */
final class OneNodeLocator implements NodeLocator {

  private volatile MemcachedNode node;

  OneNodeLocator(MemcachedNode node) {
    this.node = node;
  }

  @Override
  public MemcachedNode getPrimary(String key) {
    return node;
  }

  /** No other node to try. */
  @Override
  public Iterator<MemcachedNode> getSequence(String key) {
    return Collections.emptyIterator();
  }

  @Override
  public Collection<MemcachedNode> getAll() {
    return List.of(node);
  }

  @Override
  public NodeLocator getReadonlyCopy() {
    return new OneNodeLocator(new MemcachedNodeROImpl(node));
  }

  @Override
  public void updateLocator(List<MemcachedNode> nodes) {
    if (nodes.size() != 1) {
      throw new UnsupportedOperationException("one server's locator given " + nodes.size());
    }
    node = nodes.get(0);
  }
}
