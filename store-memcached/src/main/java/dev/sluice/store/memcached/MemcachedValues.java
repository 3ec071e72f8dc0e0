package dev.sluice.store.memcached;

import dev.sluice.spi.SharedValues;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import net.spy.memcached.CASResponse;
import net.spy.memcached.CASValue;

/**
 * Shared values in memcached, one item each under {@code {prefix}:value:{name}}: {@code gets} reads
 * a value with its CAS id, and a write is a {@code cas} on that id, or an {@code add} when there
 * was none. Each call waits at most the store's operation timeout.
 */
final class MemcachedValues implements SharedValues {

  private final Connection connection;
  private final String prefix;
  private final long timeoutMillis;

  MemcachedValues(Connection connection, String prefix, Duration timeout) {
    this.connection = connection;
    this.prefix = prefix;
    this.timeoutMillis = Math.max(1, timeout.toMillis());
  }

  private String key(String name) {
    return prefix + ":value:" + Keys.part(name);
  }

  @Override
  public Optional<Versioned> get(String name) {
    CASValue<Object> v = await(connection.client().asyncGets(key(name)), name);
    if (v == null) {
      return Optional.empty();
    }
    if (!(v.getValue() instanceof String s)) {
      throw new IllegalStateException("the value '" + name + "' in memcached is not text");
    }
    return Optional.of(new Versioned(s, v.getCas()));
  }

  @Override
  public boolean compareAndSet(String name, long version, String value, Duration ttl) {
    int exp = ttl.isZero() ? 0 : (int) Math.max(1, (ttl.toMillis() + 999) / 1000);
    if (version == 0) {
      return Boolean.TRUE.equals(await(connection.client().add(key(name), exp, value), name));
    }
    return await(connection.client().asyncCAS(key(name), version, exp, value), name)
        == CASResponse.OK;
  }

  private <T> T await(Future<T> f, String name) {
    try {
      return f.get(timeoutMillis, TimeUnit.MILLISECONDS);
    } catch (TimeoutException | ExecutionException | RuntimeException e) {
      f.cancel(false);
      throw new StoreUnavailableException(
          "memcached did not answer for the value '" + name + "' within " + timeoutMillis + " ms");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StoreUnavailableException("interrupted while reading the value '" + name + "'");
    }
  }
}
