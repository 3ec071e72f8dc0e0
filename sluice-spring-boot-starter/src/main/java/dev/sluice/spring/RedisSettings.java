package dev.sluice.spring;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;

/**
 * The Redis store's settings ({@code RedisStoreProvider}'s) from {@code sluice.redis.*}, and, where
 * neither {@code sluice.redis.uri} nor {@code sluice.redis.cluster} is set, from Spring Data's
 * {@code spring.data.redis.*}: {@code url}, or {@code host}, {@code port} and {@code database};
 * {@code sentinel.master} and {@code sentinel.nodes}; {@code cluster.nodes}; {@code username},
 * {@code password}, {@code ssl.enabled} and {@code connect-timeout}. Spring's command {@code
 * timeout} is not taken: it bounds a background command, not a request's decision, which waits
 * {@code sluice.redis.operation-timeout} (50 ms).
 */
final class RedisSettings {

  private RedisSettings() {}

  static Map<String, String> of(SluiceProperties.Redis r, Environment env) {
    Map<String, String> out = new HashMap<>();
    Binder binder = Binder.get(env);
    put(out, "prefix", r.getPrefix());
    put(out, "operationTimeout", millis(r.getOperationTimeout()));
    put(out, "connectTimeout", millis(r.getConnectTimeout()));
    String user = r.getUsername();
    String password = r.getPassword();
    Boolean tls = r.getTls();
    if (r.getUri() != null || r.getCluster() != null) {
      put(out, "uri", r.getUri());
      put(out, "cluster", r.getCluster());
    } else {
      String p = "spring.data.redis.";
      List<String> clusterNodes =
          binder.bind(p + "cluster.nodes", Bindable.listOf(String.class)).orElse(List.of());
      List<String> sentinels =
          binder.bind(p + "sentinel.nodes", Bindable.listOf(String.class)).orElse(List.of());
      String master = env.getProperty(p + "sentinel.master");
      String url = env.getProperty(p + "url");
      String database = env.getProperty(p + "database");
      if (!clusterNodes.isEmpty()) {
        out.put("cluster", String.join(",", clusterNodes));
      } else if (master != null && !sentinels.isEmpty()) {
        out.put(
            "uri",
            "redis-sentinel://"
                + String.join(",", sentinels)
                + (database == null ? "" : "/" + database)
                + "#"
                + master);
      } else if (url != null) {
        out.put("uri", url);
      } else {
        String host = env.getProperty(p + "host", "localhost");
        String port = env.getProperty(p + "port", "6379");
        out.put("uri", "redis://" + host + ":" + port + (database == null ? "" : "/" + database));
      }
      if (user == null) {
        user = env.getProperty(p + "username");
      }
      if (password == null) {
        password = env.getProperty(p + "password");
      }
      if (tls == null && binder.bind(p + "ssl.enabled", Boolean.class).orElse(false)) {
        tls = true;
      }
      if (r.getConnectTimeout() == null) {
        put(
            out,
            "connectTimeout",
            millis(binder.bind(p + "connect-timeout", Duration.class).orElse(null)));
      }
    }
    put(out, "username", password == null ? null : user);
    put(out, "password", password);
    put(out, "tls", tls == null ? null : tls.toString());
    return out;
  }

  private static void put(Map<String, String> settings, String name, String value) {
    if (value != null) {
      settings.put(name, value);
    }
  }

  private static String millis(Duration d) {
    return d == null ? null : d.toMillis() + "ms";
  }
}
