package dev.sluice.store.redis;

import dev.sluice.spi.SharedValues;
import io.lettuce.core.ScriptOutputType;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Shared values in Redis, one hash each under {@code {prefix}:value:{name}} holding the text and
 * its version; a write is a script that compares the version and writes in one step. Each call
 * waits at most the store's operation timeout (the connect timeout until Redis first answered).
 */
final class RedisValues implements SharedValues {

  private final Connection connection;
  private final Keys keys;
  private final long timeoutMillis;

  RedisValues(Connection connection, Keys keys, Duration timeout) {
    this.connection = connection;
    this.keys = keys;
    this.timeoutMillis = Math.max(1, timeout.toMillis());
  }

  @Override
  public Optional<Versioned> get(String name) {
    List<Object> v =
        await(
            Script.VALUE_GET.run(
                connection.commands(), ScriptOutputType.MULTI, new String[] {keys.value(name)}),
            name);
    if (v == null || v.size() < 2) {
      return Optional.empty();
    }
    return Optional.of(new Versioned(v.get(0).toString(), Long.parseLong(v.get(1).toString())));
  }

  @Override
  public boolean compareAndSet(String name, long version, String value, Duration ttl) {
    String ms = ttl.isZero() ? "0" : Long.toString(Math.max(1, ttl.toMillis()));
    Long n =
        await(
            Script.VALUE_SET.run(
                connection.commands(),
                ScriptOutputType.INTEGER,
                new String[] {keys.value(name)},
                Long.toString(version),
                value,
                ms),
            name);
    return n != null && n != 0;
  }

  private <T> T await(CompletableFuture<T> f, String name) {
    try {
      return f.get(timeoutMillis, TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      throw new StoreUnavailableException(
          "redis did not answer for the value '" + name + "' within " + timeoutMillis + " ms");
    } catch (ExecutionException e) {
      // What Redis or the connection said (NOPERM, say), not a timeout it was not.
      Throwable cause = e.getCause() == null ? e : e.getCause();
      String said = cause.getMessage() == null ? cause.toString() : cause.getMessage();
      throw new StoreUnavailableException("redis failed on the value '" + name + "': " + said);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StoreUnavailableException("interrupted while reading the value '" + name + "'");
    }
  }
}
