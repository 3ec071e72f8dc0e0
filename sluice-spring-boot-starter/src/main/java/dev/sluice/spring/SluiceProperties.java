package dev.sluice.spring;

import java.time.Duration;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code sluice.*} properties. Only {@code sluice.rules} is required; without it the starter
 * configures nothing.
 */
@ConfigurationProperties("sluice")
public class SluiceProperties {

  private String rules;
  private Duration rulesCheckInterval = Duration.ofSeconds(1);
  private String store = "in-memory";
  private Duration knobs;
  private final Memcached memcached = new Memcached();
  private final InMemory inMemory = new InMemory();
  private final Filter filter = new Filter();

  /**
   * The rules file: {@code classpath:NAME} (read once), or a file path, {@code file:} prefixed or
   * not (watched: edits take effect live).
   */
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

  /** {@code in-memory} (the default) or {@code memcached} (add sluice-store-memcached). */
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

  public Memcached getMemcached() {
    return memcached;
  }

  public InMemory getInMemory() {
    return inMemory;
  }

  public Filter getFilter() {
    return filter;
  }

  /** {@code sluice.memcached.*}. */
  public static class Memcached {
    private String servers;
    private String prefix;
    private Duration operationTimeout;
    private Duration connectTimeout;

    /** {@code host:port,host:port}; required with {@code sluice.store=memcached}. */
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

  /** {@code sluice.in-memory.*}. */
  public static class InMemory {
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
    private Integer order;
    private List<String> urlPatterns = List.of("/*");

    /**
     * The filter's order. Unset: just after Spring Security's filter chain ({@code
     * spring.security.filter.order} + 1, -99 by default), so rules keyed on {@code user} see the
     * authenticated user, and requests Spring Security refuses (401, 403) are not counted.
     */
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
