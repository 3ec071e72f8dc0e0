package dev.sluice.store.memcached;

import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import net.spy.memcached.internal.BulkFuture;

/** One key's value out of a multiget. */
final class OneOfBulk implements Future<Object> {
  private final BulkFuture<Map<String, Object>> bulk;
  private final String key;

  OneOfBulk(BulkFuture<Map<String, Object>> bulk, String key) {
    this.bulk = bulk;
    this.key = key;
  }

  /** {@return the multiget this key is read with} */
  BulkFuture<Map<String, Object>> bulk() {
    return bulk;
  }

  @Override
  public boolean cancel(boolean mayInterrupt) {
    return bulk.cancel(mayInterrupt);
  }

  @Override
  public boolean isCancelled() {
    return bulk.isCancelled();
  }

  @Override
  public boolean isDone() {
    return bulk.isDone();
  }

  @Override
  public Object get() throws InterruptedException, ExecutionException {
    Map<String, Object> m = bulk.get();
    return m == null ? null : m.get(key);
  }

  @Override
  public Object get(long timeout, TimeUnit unit)
      throws InterruptedException, ExecutionException, TimeoutException {
    Map<String, Object> m = bulk.get(timeout, unit);
    return m == null ? null : m.get(key);
  }
}
