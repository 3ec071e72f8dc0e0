package dev.sluice.example;

import dev.sluice.control.KnobWatcher;
import dev.sluice.http.RuleSet;
import dev.sluice.jaxrs.SluiceFeature;
import dev.sluice.spi.CounterStore;
import dev.sluice.store.inmemory.InMemoryCounterStore;
import dev.sluice.store.memcached.MemcachedCounterStore;
import dev.sluice.store.redis.RedisCounterStore;
import dev.sluice.yaml.RulesException;
import dev.sluice.yaml.YamlRules;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import org.glassfish.grizzly.http.server.HttpServer;
import org.glassfish.jersey.grizzly2.httpserver.GrizzlyHttpServerFactory;
import org.glassfish.jersey.server.ResourceConfig;

/**
 * The Sluice demo: a small API on Jersey and Grizzly, limited by a rules file.
 *
 * <pre>
 * java -jar example/target/sluice-example.jar [--port 8080] [--rules FILE] [--memcached host:port[,host:port…]]
 *     [--redis host:port | redis://… | rediss://… | redis-sentinel://…#master] [--redis-cluster host:port,…]
 * </pre>
 */
public final class Demo implements AutoCloseable {

  private final HttpServer server;
  private final SluiceFeature feature;
  private final CounterStore store;
  private final int port;

  private Demo(HttpServer server, SluiceFeature feature, CounterStore store, int port) {
    this.server = server;
    this.feature = feature;
    this.store = store;
    this.port = port;
  }

  public static void main(String[] args) throws InterruptedException {
    if (args.length == 1 && (args[0].equals("--help") || args[0].equals("-h"))) {
      System.out.println(Options.USAGE);
      return;
    }
    Options o;
    try {
      o = Options.parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println("sluice-example: " + e.getMessage());
      System.err.println(Options.USAGE);
      System.exit(2);
      return;
    }
    Demo demo;
    try {
      demo = start(o, System.out);
    } catch (RulesException e) {
      System.err.println("sluice-example: bad rules file: " + e.getMessage());
      System.exit(1);
      return;
    } catch (UncheckedIOException e) {
      System.err.println("sluice-example: " + e.getMessage());
      System.exit(1);
      return;
    }
    Runtime.getRuntime().addShutdownHook(new Thread(demo::close));
    new CountDownLatch(1).await();
  }

  /**
   * The demo's accounts: API key to customer. A real service reads its own store, after its
   * authentication filter has validated the key.
   */
  static final java.util.Map<String, String> ACCOUNTS =
      java.util.Map.of(
          "acme-1",
          "acme",
          "acme-2",
          "acme",
          "acme-3",
          "acme",
          "acme-4",
          "acme",
          "globex-1",
          "globex");

  /** Starts the demo; for tests and the command line. */
  public static Demo start(Options o, PrintStream out) {
    RuleSet rules =
        o.rules == null ? YamlRules.loadResource("demo-rules.yaml") : YamlRules.load(o.rules);
    java.time.InstantSource storeClock =
        o.clock == null ? java.time.InstantSource.system() : o.clock;
    CounterStore store;
    if (o.redis != null || o.redisCluster != null) {
      RedisCounterStore.Builder redis = RedisCounterStore.builder().clock(storeClock);
      redis = o.redis != null ? redis.uri(o.redis) : redis.cluster(o.redisCluster);
      store = (o.storeTimeout == null ? redis : redis.operationTimeout(o.storeTimeout)).build();
    } else if (o.memcached != null) {
      var memcached = MemcachedCounterStore.builder().servers(o.memcached).clock(storeClock);
      if (o.storeTimeout != null) {
        memcached = memcached.operationTimeout(o.storeTimeout);
      }
      store = memcached.build();
    } else {
      store = InMemoryCounterStore.builder().clock(storeClock).build();
    }
    SluiceFeature.Builder b =
        SluiceFeature.builder(store)
            // The customer of an API key comes from the server's own accounts, not from a header
            // the client sends (and could leave out): the key source app:customer in the rules.
            .keyResolver("customer", r -> r.header("X-Api-Key").map(ACCOUNTS::get))
            // The fleet's knobs (sluice knobs set …) are read from the store every second.
            .knobs(KnobWatcher.DEFAULT_REFRESH);
    if (o.clock != null) {
      b.clock(o.clock);
    }
    SluiceFeature feature = (o.rules == null ? b.rules(rules) : b.rulesFile(o.rules)).build();
    ResourceConfig app =
        new ResourceConfig(DemoResources.class)
            .register(feature)
            .property("jersey.config.server.wadl.disableWadl", true);
    HttpServer server =
        GrizzlyHttpServerFactory.createHttpServer(
            URI.create("http://" + o.host + ":" + o.port + "/"), app, false);
    // A malformed request target gets a 400, and no error page shows a stack trace.
    org.glassfish.grizzly.http.server.ServerConfiguration config = server.getServerConfiguration();
    org.glassfish.grizzly.http.server.HttpHandler jersey =
        config.getHttpHandlersWithMapping().keySet().iterator().next();
    config.removeHttpHandler(jersey);
    config.addHttpHandler(new RequestTargets(jersey));
    config.setDefaultErrorPageGenerator(RequestTargets.NO_STACK_TRACES);
    // Grizzly closes a keep-alive connection after 256 requests by default, which races with a
    // client sending its next request on it: keep connections open (idle ones still time out).
    server.getListener("grizzly").getKeepAlive().setMaxRequestsCount(-1);
    if (o.workers > 0) {
      server
          .getListener("grizzly")
          .getTransport()
          .setWorkerThreadPoolConfig(
              org.glassfish.grizzly.threadpool.ThreadPoolConfig.defaultConfig()
                  .setCorePoolSize(o.workers)
                  .setMaxPoolSize(o.workers));
    }
    try {
      server.start();
    } catch (IOException e) {
      throw new UncheckedIOException(
          "cannot listen on " + o.host + ":" + o.port + ": " + e.getMessage(), e);
    }
    int port = server.getListener("grizzly").getPort();
    String url = "http://" + (o.host.equals("0.0.0.0") ? "localhost" : o.host) + ":" + port;
    out.println("Sluice demo listening on " + url);
    out.println("Store: " + o.storeName());
    out.println(
        "Rules ("
            + (o.rules == null ? "bundled demo-rules.yaml" : o.rules + ", watched for edits")
            + "):");
    rules.rules().forEach(r -> out.println("  " + r));
    out.println(
        "Try: for i in $(seq 12); do curl -s -o /dev/null -w '%{http_code} ' -H 'X-Api-Key: demo' "
            + url
            + "/api/v1/report; done; echo");
    out.println("     curl -i -H 'X-Api-Key: demo' " + url + "/api/v1/report");
    if (o.memcached != null || o.redis != null || o.redisCluster != null) {
      String where =
          o.redis != null
              ? "--redis " + o.redis
              : o.redisCluster != null
                  ? "--redis-cluster " + o.redisCluster
                  : "--memcached " + o.memcached;
      out.println(
          "Knobs (every instance on this store, within 1 s): java -jar cli/target/sluice.jar"
              + " knobs set "
              + where
              + " rule:reports-per-key limit=2");
    }
    return new Demo(server, feature, store, port);
  }

  public int port() {
    return port;
  }

  public SluiceFeature feature() {
    return feature;
  }

  @Override
  public void close() {
    server.shutdownNow();
    feature.close();
    store.close();
  }

  /** Command-line options. */
  public static final class Options {
    static final String USAGE =
        "usage: java -jar sluice-example.jar [--port N] [--rules FILE] [--memcached"
            + " host:port[,host:port...]] [--redis host:port|redis://...|redis-sentinel://...]"
            + " [--redis-cluster host:port,...] [--store-timeout MS (50)] [--workers N (8)]";
    String host = "0.0.0.0";
    int port = 8080;
    java.nio.file.Path rules;
    String memcached;
    String redis;
    String redisCluster;

    /** The store's operation timeout; null for the store's default. */
    Duration storeTimeout;

    /** The server's worker threads; the bundled rules' loadShedding.workers.threads matches. */
    int workers = 8;

    java.time.InstantSource clock;

    /**
     * Where time comes from: by default the system clock, corrected by memcached's when counters
     * live there (tests inject a fake one, read as it is).
     */
    public Options clock(java.time.InstantSource clock) {
      this.clock = clock;
      return this;
    }

    /** Listens on this address; 0.0.0.0 by default. */
    public Options host(String host) {
      this.host = host;
      return this;
    }

    /** 0 for any free port. */
    public Options port(int port) {
      this.port = port;
      return this;
    }

    public Options rules(java.nio.file.Path rules) {
      this.rules = rules;
      return this;
    }

    /** The server's worker threads; 0 (the default) for Grizzly's own choice. */
    public Options workers(int workers) {
      this.workers = workers;
      return this;
    }

    public Options memcached(String servers) {
      this.memcached = servers;
      return this;
    }

    /** One Redis: host:port, or a redis://, rediss:// or redis-sentinel:// URI. */
    public Options redis(String uri) {
      this.redis = uri;
      return this;
    }

    /** A Redis Cluster, from some of its nodes: host:port,host:port. */
    public Options redisCluster(String nodes) {
      this.redisCluster = nodes;
      return this;
    }

    String storeName() {
      if (redis != null) {
        return "redis " + redis;
      }
      if (redisCluster != null) {
        return "redis cluster " + redisCluster;
      }
      return memcached == null ? "in-memory (this JVM only)" : "memcached " + memcached;
    }

    public static Options parse(String... args) {
      Options o = new Options();
      for (int i = 0; i < args.length; i++) {
        String a = args[i];
        if (i + 1 >= args.length) {
          throw new IllegalArgumentException(a + " needs a value");
        }
        String v = args[++i];
        switch (a) {
          case "--port" -> {
            try {
              o.port = Integer.parseInt(v);
            } catch (NumberFormatException e) {
              throw new IllegalArgumentException("--port: not a number: " + v);
            }
            if (o.port < 0 || o.port > 65535) {
              throw new IllegalArgumentException("--port: out of range: " + v);
            }
          }
          case "--host" -> o.host = v;
          case "--rules" -> o.rules = java.nio.file.Path.of(v);
          case "--memcached" -> o.memcached = v;
          case "--redis" -> o.redis = v;
          case "--redis-cluster" -> o.redisCluster = v;
          case "--store-timeout" -> {
            try {
              o.storeTimeout = Duration.ofMillis(Long.parseLong(v));
            } catch (NumberFormatException e) {
              throw new IllegalArgumentException("--store-timeout: not a number: " + v);
            }
            if (o.storeTimeout.toMillis() <= 0) {
              throw new IllegalArgumentException("--store-timeout: must be > 0: " + v);
            }
          }
          case "--workers" -> {
            try {
              o.workers = Integer.parseInt(v);
            } catch (NumberFormatException e) {
              throw new IllegalArgumentException("--workers: not a number: " + v);
            }
            if (o.workers < 1 || o.workers > 1_000) {
              throw new IllegalArgumentException("--workers: 1 to 1000, not " + v);
            }
          }
          default -> throw new IllegalArgumentException("unknown option " + a);
        }
      }
      if ((o.memcached != null ? 1 : 0)
              + (o.redis != null ? 1 : 0)
              + (o.redisCluster != null ? 1 : 0)
          > 1) {
        throw new IllegalArgumentException(
            "one store at most: --memcached, --redis or --redis-cluster");
      }
      return o;
    }
  }
}
