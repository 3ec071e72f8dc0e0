package dev.sluice.spring;

import java.time.Duration;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code sluice.*} properties. Only {@code sluice.rules} is required; without it the starter
 * configures nothing. Each field's Javadoc, plain text, is its description in the configuration
 * metadata IDEs complete from; a {@code sluice.*} name that is none of these is warned about at
 * start ({@link UnknownProperties}).
 */
@ConfigurationProperties("sluice")
public class SluiceProperties {

  /**
   * The rules file: classpath:NAME (read once), or a file path, file: prefixed or not (watched:
   * edits take effect live). Unset, the starter configures nothing.
   */
  private String rules;

  /** How often a rules file is checked for edits. */
  private Duration rulesCheckInterval = Duration.ofSeconds(1);

  /** The counter store: in-memory (one instance), memcached or redis (a fleet). */
  private String store = "in-memory";

  /** How often to read the fleet's knobs from the store; unset, knobs are not read. */
  private Duration knobs;

  /** The memcached store, for sluice.store=memcached. */
  private final Memcached memcached = new Memcached();

  /** The in-memory store, for sluice.store=in-memory. */
  private final InMemory inMemory = new InMemory();

  /** The Redis store, for sluice.store=redis; spring.data.redis.* gives what this leaves unset. */
  private final Redis redis = new Redis();

  /** The servlet filter. */
  private final Filter filter = new Filter();

  /** {@code sluice.rules}. */
  public String getRules() {
    return rules;
  }

  public void setRules(String rules) {
    this.rules = rules;
  }

  /** {@return how often a rules file is checked for edits (1s)} */
  public Duration getRulesCheckInterval() {
    return rulesCheckInterval;
  }

  public void setRulesCheckInterval(Duration rulesCheckInterval) {
    this.rulesCheckInterval = rulesCheckInterval;
  }

  /** {@code sluice.store}. */
  public String getStore() {
    return store;
  }

  public void setStore(String store) {
    this.store = store;
  }

  /** {@return how often to read the fleet's knobs from the store; unset, knobs are not read} */
  public Duration getKnobs() {
    return knobs;
  }

  public void setKnobs(Duration knobs) {
    this.knobs = knobs;
  }

  /** {@code sluice.memcached.*}. */
  public Memcached getMemcached() {
    return memcached;
  }

  /** {@code sluice.redis.*}. */
  public Redis getRedis() {
    return redis;
  }

  /** {@code sluice.in-memory.*}. */
  public InMemory getInMemory() {
    return inMemory;
  }

  /** {@code sluice.filter.*}. */
  public Filter getFilter() {
    return filter;
  }

  /** {@code sluice.memcached.*}. */
  public static class Memcached {
    /** The servers, host:port,host:port; required with sluice.store=memcached. */
    private String servers;

    /** The prefix of every key; sluice unless set. */
    private String prefix;

    /** The most a decision waits for memcached; 50ms unless set. */
    private Duration operationTimeout;

    /** How long the start waits for the first connections; 2s unless set. */
    private Duration connectTimeout;

    /** {@code sluice.memcached.servers}. */
    public String getServers() {
      return servers;
    }

    public void setServers(String servers) {
      this.servers = servers;
    }

    /** {@return the key prefix ({@code sluice})} */
    public String getPrefix() {
      return prefix;
    }

    public void setPrefix(String prefix) {
      this.prefix = prefix;
    }

    /** {@return the most a decision waits for memcached (50ms)} */
    public Duration getOperationTimeout() {
      return operationTimeout;
    }

    public void setOperationTimeout(Duration operationTimeout) {
      this.operationTimeout = operationTimeout;
    }

    /** {@return the start-up wait for connections (2s)} */
    public Duration getConnectTimeout() {
      return connectTimeout;
    }

    public void setConnectTimeout(Duration connectTimeout) {
      this.connectTimeout = connectTimeout;
    }
  }

  /**
   * {@code sluice.redis.*}. Where neither uri nor cluster is set, the connection comes from
   * spring.data.redis.* (url, host and port, sentinel, cluster, username, password, ssl, database,
   * connect-timeout), so an application already on Redis configures it once.
   */
  public static class Redis {
    /** One Redis: host:port, redis://, rediss:// (TLS) or redis-sentinel://…#master. */
    private String uri;

    /** A Redis Cluster, some of its nodes: host:port,host:port. */
    private String cluster;

    /** The prefix of every key; sluice unless set. */
    private String prefix;

    /** An ACL user (with a password). */
    private String username;

    /** The password (of the ACL user, or requirepass). */
    private String password;

    /** Whether to connect over TLS, as rediss:// does. */
    private Boolean tls;

    /** The most a decision waits for Redis; 50ms unless set. */
    private Duration operationTimeout;

    /** How long the start waits for the first connection; 2s unless set. */
    private Duration connectTimeout;

    /** {@code sluice.redis.uri}. */
    public String getUri() {
      return uri;
    }

    public void setUri(String uri) {
      this.uri = uri;
    }

    /** {@code sluice.redis.cluster}. */
    public String getCluster() {
      return cluster;
    }

    public void setCluster(String cluster) {
      this.cluster = cluster;
    }

    /** {@return the key prefix ({@code sluice})} */
    public String getPrefix() {
      return prefix;
    }

    public void setPrefix(String prefix) {
      this.prefix = prefix;
    }

    /** {@code sluice.redis.username}. */
    public String getUsername() {
      return username;
    }

    public void setUsername(String username) {
      this.username = username;
    }

    /** {@code sluice.redis.password}. */
    public String getPassword() {
      return password;
    }

    public void setPassword(String password) {
      this.password = password;
    }

    /** {@code sluice.redis.tls}. */
    public Boolean getTls() {
      return tls;
    }

    public void setTls(Boolean tls) {
      this.tls = tls;
    }

    /** {@return the most a decision waits for Redis (50ms)} */
    public Duration getOperationTimeout() {
      return operationTimeout;
    }

    public void setOperationTimeout(Duration operationTimeout) {
      this.operationTimeout = operationTimeout;
    }

    /** {@return the start-up wait for the connection (2s)} */
    public Duration getConnectTimeout() {
      return connectTimeout;
    }

    public void setConnectTimeout(Duration connectTimeout) {
      this.connectTimeout = connectTimeout;
    }
  }

  /** {@code sluice.in-memory.*}. */
  public static class InMemory {
    /** The most counters alive at once; 1,000,000 unless set. */
    private Integer maximumCounters;

    /** {@return the most counters alive (1,000,000)} */
    public Integer getMaximumCounters() {
      return maximumCounters;
    }

    public void setMaximumCounters(Integer maximumCounters) {
      this.maximumCounters = maximumCounters;
    }
  }

  /** {@code sluice.filter.*}. */
  public static class Filter {
    /**
     * The filter's order. Unset, just after Spring Security's filter chain
     * (spring.security.filter.order + 1, -99 by default), so rules keyed on user see the
     * authenticated user, and requests Spring Security refuses (401, 403) are not counted.
     */
    private Integer order;

    /** The URL patterns the filter sees. */
    private List<String> urlPatterns = List.of("/*");

    /** {@code sluice.filter.order}. */
    public Integer getOrder() {
      return order;
    }

    public void setOrder(Integer order) {
      this.order = order;
    }

    /** {@return the URL patterns the filter sees ({@code /*})} */
    public List<String> getUrlPatterns() {
      return urlPatterns;
    }

    public void setUrlPatterns(List<String> urlPatterns) {
      this.urlPatterns = urlPatterns;
    }
  }
}
