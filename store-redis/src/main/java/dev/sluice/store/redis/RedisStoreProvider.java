package dev.sluice.store.redis;

import dev.sluice.Periods;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterStoreProvider;
import java.time.Duration;
import java.util.Map;
import java.util.Set;

/**
 * {@code redis}: {@code uri} ({@code host:port}, {@code redis://…}, {@code rediss://…} or {@code
 * redis-sentinel://…#master}) or {@code cluster} ({@code host:port,host:port}), one of them
 * required; optionally {@code prefix}, {@code username} and {@code password} (an ACL user, or only
 * the password for {@code requirepass}), {@code tls} ({@code true}/{@code false}), {@code
 * trustedCertificates} (a PEM file of the certificates TLS trusts), {@code operationTimeout} and
 * {@code connectTimeout} (durations such as {@code 50ms} or {@code 2s}).
 */
public final class RedisStoreProvider implements CounterStoreProvider {

  @Override
  public String name() {
    return "redis";
  }

  @Override
  public Class<? extends CounterStore> type() {
    return RedisCounterStore.class;
  }

  @Override
  public Set<String> settings() {
    return Set.of(
        "uri",
        "cluster",
        "prefix",
        "username",
        "password",
        "tls",
        "trustedCertificates",
        "operationTimeout",
        "connectTimeout");
  }

  @Override
  public CounterStore create(Map<String, String> settings) {
    String uri = settings.get("uri");
    String cluster = settings.get("cluster");
    boolean hasUri = uri != null && !uri.isBlank();
    boolean hasCluster = cluster != null && !cluster.isBlank();
    if (hasUri == hasCluster) {
      throw new IllegalArgumentException(
          "uri: give one of uri (host:port or redis://…) and cluster (host:port,host:port)"
              + " for the redis store");
    }
    RedisCounterStore.Builder b = RedisCounterStore.builder();
    if (hasUri) {
      b.uri(uri);
    } else {
      b.cluster(cluster);
    }
    if (settings.containsKey("prefix")) {
      b.prefix(settings.get("prefix").trim());
    }
    if (settings.containsKey("password")) {
      String user = settings.get("username");
      b.credentials(user == null || user.isBlank() ? null : user.trim(), settings.get("password"));
    } else if (settings.containsKey("username")) {
      throw new IllegalArgumentException("username: needs a password");
    }
    if (settings.containsKey("tls")) {
      String tls = settings.get("tls").trim();
      if (!tls.equals("true") && !tls.equals("false")) {
        throw new IllegalArgumentException("tls: true or false, not '" + tls + "'");
      }
      b.tls(tls.equals("true"));
    }
    if (settings.containsKey("trustedCertificates")) {
      b.trustedCertificates(java.nio.file.Path.of(settings.get("trustedCertificates").trim()));
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
