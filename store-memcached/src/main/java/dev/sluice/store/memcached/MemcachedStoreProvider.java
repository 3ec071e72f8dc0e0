package dev.sluice.store.memcached;

import dev.sluice.Periods;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterStoreProvider;
import java.time.Duration;
import java.util.Map;
import java.util.Set;

/**
 * {@code memcached}: {@code servers} ({@code host:port,host:port}, required), and optionally {@code
 * prefix}, {@code operationTimeout}, {@code connectTimeout} (durations such as {@code 50ms} or
 * {@code 2s}).
 */
public final class MemcachedStoreProvider implements CounterStoreProvider {

  @Override
  public String name() {
    return "memcached";
  }

  @Override
  public Class<? extends CounterStore> type() {
    return MemcachedCounterStore.class;
  }

  @Override
  public Set<String> settings() {
    return Set.of("servers", "prefix", "operationTimeout", "connectTimeout");
  }

  @Override
  public CounterStore create(Map<String, String> settings) {
    String servers = settings.get("servers");
    if (servers == null || servers.isBlank()) {
      throw new IllegalArgumentException(
          "servers: required for the memcached store (host:port,host:port)");
    }
    MemcachedStoreBuilder b = MemcachedCounterStore.builder();
    try {
      b.servers(servers);
    } catch (RuntimeException e) {
      throw new IllegalArgumentException(
          "servers: bad server list '" + servers + "': " + e.getMessage());
    }
    if (settings.containsKey("prefix")) {
      b.prefix(settings.get("prefix").trim());
    }
    if (settings.containsKey("operationTimeout")) {
      b.operationTimeout(duration("operationTimeout", settings.get("operationTimeout")));
    }
    if (settings.containsKey("connectTimeout")) {
      b.connectTimeout(duration("connectTimeout", settings.get("connectTimeout")));
    }
    return b.build();
  }

  private static Duration duration(String name, String text) {
    return Periods.parse(text)
        .orElseThrow(
            () ->
                new IllegalArgumentException(
                    name + ": bad duration '" + text + "' (use e.g. 50ms or 2s)"));
  }
}
