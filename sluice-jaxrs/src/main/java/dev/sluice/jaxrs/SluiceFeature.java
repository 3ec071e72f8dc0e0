package dev.sluice.jaxrs;

import dev.sluice.DecisionListener;
import dev.sluice.http.QuotaResolver;
import dev.sluice.http.RequestLimiter;
import dev.sluice.http.RuleSet;
import dev.sluice.spi.CounterStore;
import dev.sluice.yaml.RulesFile;
import dev.sluice.yaml.YamlRules;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.core.Feature;
import jakarta.ws.rs.core.FeatureContext;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Objects;
import java.util.function.Function;
import org.glassfish.jersey.InjectionManagerProvider;

/**
 * Rate limiting for a JAX-RS application, registered in one line:
 *
 * <pre>{@code
 * register(SluiceFeature.fromYaml(Path.of("rules.yaml"), store));
 * }</pre>
 *
 * <p>Rules from the rules set are enforced before resource matching; {@link RateLimited} on
 * resources after it. When any resource carries {@link RateLimited}, every request is decided once,
 * after matching, by the rules and its method's annotations together, so a refusal by one takes
 * nothing from the others. Every limited response carries the rate-limit headers; a rejected one is
 * a 429 (503 when the store failed and the rule fails closed) with a problem+json body. The rules
 * file is watched and a valid edit takes effect at once; {@link #limiter()} gives the runtime
 * switches.
 *
 * <p>JAX-RS has no standard way to read the client's address, so the feature reads it from the
 * container underneath Jersey: Grizzly, Jetty, or any servlet container. Elsewhere, pass {@link
 * Builder#remoteAddress}; without it, start-up fails if a rule keys on {@code ip}, rather than let
 * every anonymous request through unlimited.
 *
 * <p>Rule paths are matched against the path below the context path: under a servlet container the
 * request URI without the servlet context path (so a Jersey servlet mapped at {@code /v1/*} sees
 * {@code /v1/api/hello}, as the servlet filter does); on a standalone server, the path below the
 * application's base URI.
 */
public final class SluiceFeature implements Feature, AutoCloseable {

  private final RequestLimiter limiter;
  private final RulesFile watcher;
  private final Builder config;

  private SluiceFeature(Builder b, RuleSet rules) {
    this.config = b;
    this.limiter = limiter(b, rules);
    this.watcher =
        b.rulesFile == null ? null : RulesFile.watch(b.rulesFile, limiter, b.watchInterval);
  }

  /**
   * Enforces the rules in {@code rulesFile}, counted in {@code store}; the file is checked for
   * edits every second.
   *
   * @throws dev.sluice.yaml.RulesException naming the line and field of a bad file
   */
  public static SluiceFeature fromYaml(Path rulesFile, CounterStore store) {
    return builder(store).rulesFile(rulesFile).build();
  }

  public static Builder builder(CounterStore store) {
    return new Builder(store);
  }

  /**
   * {@return the limiter behind the rules set: its kill switch, rule switches and {@code update}}
   */
  public RequestLimiter limiter() {
    return limiter;
  }

  @Override
  public boolean configure(FeatureContext context) {
    ContainerAccess container =
        new ContainerAccess(
            InjectionManagerProvider.getInjectionManager(context), config.remoteAddress, limiter);
    context.register(container);
    context.register(new SluiceRequestFilter(limiter, container), Priorities.AUTHENTICATION + 50);
    context.register(new SluiceResponseFilter(limiter), Priorities.HEADER_DECORATOR);
    context.register(new PendingRulesFilter(limiter), Priorities.AUTHENTICATION + 70);
    context.register(new RateLimitedFeature(limiter, container));
    context.register(new SlotRelease(limiter));
    // Outermost (lowest priority first): an encoder's last bytes come after the release too.
    context.register(new ReleaseBeforeResponse(), Priorities.AUTHENTICATION);
    return true;
  }

  /** Stops watching the rules file and the knobs. */
  @Override
  public void close() {
    limiter.close();
    if (watcher != null) {
      watcher.close();
    }
  }

  private static RequestLimiter limiter(Builder b, RuleSet rules) {
    return b.limiter.rules(rules).build();
  }

  /** Configures a {@link SluiceFeature}. */
  public static final class Builder {
    /**
     * The feature's one limiter, for the rules file and every annotated method, is built from it.
     */
    private final RequestLimiter.Builder limiter;

    private RuleSet rules = RuleSet.builder().build();
    private Path rulesFile;
    private Duration watchInterval = Duration.ofSeconds(1);
    private Function<ContainerRequestContext, String> remoteAddress;

    private Builder(CounterStore store) {
      this.limiter = RequestLimiter.builder(store);
    }

    /** Rules given in code. */
    public Builder rules(RuleSet rules) {
      this.rules = Objects.requireNonNull(rules, "rules");
      this.rulesFile = null;
      return this;
    }

    /** Rules read from a YAML file, and watched. */
    public Builder rulesFile(Path file) {
      this.rulesFile = Objects.requireNonNull(file, "rulesFile");
      return this;
    }

    /** How often the rules file is checked; 1 s by default, zero for never. */
    public Builder watchInterval(Duration interval) {
      if (interval.isNegative()) {
        throw new IllegalArgumentException("watchInterval must be >= 0");
      }
      this.watchInterval = interval;
      return this;
    }

    public Builder clock(InstantSource clock) {
      limiter.clock(clock);
      return this;
    }

    public Builder quotaResolver(QuotaResolver quotas) {
      limiter.quotaResolver(quotas);
      return this;
    }

    /**
     * Registers the key source {@code app:NAME}, resolved by the application from its own data; see
     * {@link RequestLimiter.Builder#keyResolver}.
     */
    public Builder keyResolver(String name, dev.sluice.http.KeyResolver resolver) {
      limiter.keyResolver(name, resolver);
      return this;
    }

    /**
     * Reads the fleet's knobs from the store every {@code refresh}; see {@link
     * RequestLimiter.Builder#knobs}.
     */
    public Builder knobs(java.time.Duration refresh) {
      limiter.knobs(refresh);
      return this;
    }

    /** Hears every decision, e.g. {@code new MicrometerListener(registry)}. */
    public Builder listener(DecisionListener listener) {
      limiter.listener(listener);
      return this;
    }

    public Builder denyCacheSize(int size) {
      limiter.denyCacheSize(size);
      return this;
    }

    /**
     * How to find the peer's address in a request, where the feature cannot find it in the
     * container (see the class comment); for example {@code ctx -> (String)
     * ctx.getProperty("peer")} with a filter of yours that sets it. This is the peer, not the
     * client: trusted proxies are still resolved from the rules' forwarding header.
     */
    public Builder remoteAddress(Function<ContainerRequestContext, String> remoteAddress) {
      this.remoteAddress = Objects.requireNonNull(remoteAddress, "remoteAddress");
      return this;
    }

    /**
     * Builds the feature, reading the rules file if one was given.
     *
     * @throws dev.sluice.yaml.RulesException naming the line and field of a bad file
     */
    public SluiceFeature build() {
      return new SluiceFeature(this, rulesFile == null ? rules : YamlRules.load(rulesFile));
    }
  }
}
