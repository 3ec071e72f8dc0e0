package dev.sluice.http;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * Every rule of an API plus what they share: the trusted proxies, which header families a response
 * carries, and the kill switch. Every matching rule applies to a request and all must pass.
 * Immutable; built with {@link #builder()}.
 */
public final class RuleSet {

  private final List<Rule> rules;
  private final List<String> trustedProxies;
  private final Set<RateLimitHeaders.Family> headers;
  private final RateLimitHeaders.ResetFormat resetFormat;
  private final boolean enabled;
  private final ForwardedHeader forwardedHeader;
  private final int ipv6Prefix;
  final List<Cidr> trusted;

  private RuleSet(Builder b) {
    this.rules = List.copyOf(b.rules);
    this.trustedProxies = List.copyOf(b.trustedProxies);
    this.headers = Set.copyOf(b.headers);
    this.resetFormat = b.resetFormat;
    this.enabled = b.enabled;
    this.forwardedHeader = b.forwardedHeader;
    this.ipv6Prefix = b.ipv6Prefix;
    this.trusted = b.trustedProxies.stream().map(Cidr::parse).toList();
    this.shedding = b.shedding;
  }

  private final Shedding shedding;

  /** Load shedding, when the rules ask for it. */
  public Optional<Shedding> shedding() {
    return Optional.ofNullable(shedding);
  }

  public static Builder builder() {
    return new Builder();
  }

  /** {@return a builder holding this rule set's settings, to derive a changed copy} */
  public Builder toBuilder() {
    Builder b =
        new Builder()
            .trustedProxies(trustedProxies)
            .resetFormat(resetFormat)
            .enabled(enabled)
            .forwardedHeader(forwardedHeader)
            .ipv6Prefix(ipv6Prefix);
    b.shedding = shedding;
    b.headers.clear();
    b.headers.addAll(headers);
    rules.forEach(b::rule);
    return b;
  }

  public List<Rule> rules() {
    return rules;
  }

  public List<String> trustedProxies() {
    return trustedProxies;
  }

  public Set<RateLimitHeaders.Family> headers() {
    return headers;
  }

  public RateLimitHeaders.ResetFormat resetFormat() {
    return resetFormat;
  }

  /** {@return the one header the trusted proxies set; {@code X-Forwarded-For} by default} */
  public ForwardedHeader forwardedHeader() {
    return forwardedHeader;
  }

  /** {@return how many leading bits of an IPv6 client address name the client; 64 by default} */
  public int ipv6Prefix() {
    return ipv6Prefix;
  }

  /** False when the kill switch is thrown: nothing is limited, nothing is counted. */
  public boolean enabled() {
    return enabled;
  }

  /** The rule with this id. */
  public Optional<Rule> rule(String id) {
    for (Rule r : rules) {
      if (r.id().equals(id)) {
        return Optional.of(r);
      }
    }
    return Optional.empty();
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder(enabled ? "" : "(kill switch on) ");
    for (Rule r : rules) {
      sb.append(r).append('\n');
    }
    if (shedding != null) {
      sb.append(shedding).append('\n');
    }
    return sb.toString();
  }

  /** Configures a {@link RuleSet}. */
  public static final class Builder {
    private final List<Rule> rules = new ArrayList<>();
    private final Set<String> ids = new HashSet<>();
    private List<String> trustedProxies = List.of();
    private final Set<RateLimitHeaders.Family> headers =
        EnumSet.allOf(RateLimitHeaders.Family.class);
    private RateLimitHeaders.ResetFormat resetFormat = RateLimitHeaders.ResetFormat.DELTA_SECONDS;
    private boolean enabled = true;
    private ForwardedHeader forwardedHeader = ForwardedHeader.X_FORWARDED_FOR;
    private int ipv6Prefix = 64;
    private Shedding shedding;

    private Builder() {}

    /** Sheds load with 503s ({@link Shedding}); none by default. */
    public Builder shedding(Shedding shedding) {
      this.shedding = java.util.Objects.requireNonNull(shedding, "shedding");
      return this;
    }

    /**
     * Adds a rule.
     *
     * @throws IllegalArgumentException if a rule with the same id is already there
     */
    public Builder rule(Rule rule) {
      Objects.requireNonNull(rule, "rule");
      if (!ids.add(rule.id())) {
        throw new IllegalArgumentException("duplicate rule id '" + rule.id() + "'");
      }
      rules.add(rule);
      return this;
    }

    /**
     * Proxies (CIDRs) whose forwarding header ({@link #forwardedHeader}) is believed. None by
     * default.
     */
    public Builder trustedProxies(List<String> cidrs) {
      for (String c : cidrs) {
        Cidr.parse(c);
      }
      this.trustedProxies = List.copyOf(cidrs);
      return this;
    }

    /**
     * The one header the trusted proxies set (the other is ignored); X-Forwarded-For by default.
     */
    public Builder forwardedHeader(ForwardedHeader header) {
      this.forwardedHeader = Objects.requireNonNull(header, "forwardedHeader");
      return this;
    }

    /**
     * Keys IPv6 clients by their first {@code bits} bits (0 to 128; 64 by default, since one host
     * commonly holds a whole /64 and can rotate addresses within it at will).
     */
    public Builder ipv6Prefix(int bits) {
      if (bits < 1 || bits > 128) {
        throw new IllegalArgumentException("ipv6Prefix must be between 1 and 128");
      }
      this.ipv6Prefix = bits;
      return this;
    }

    /** Drops every rule added so far. */
    Builder clearRules() {
      rules.clear();
      ids.clear();
      return this;
    }

    /** Which header families responses carry; both by default. */
    public Builder headers(Set<RateLimitHeaders.Family> families) {
      headers.clear();
      headers.addAll(families);
      return this;
    }

    /** How {@code X-RateLimit-Reset} is written; delta seconds by default. */
    public Builder resetFormat(RateLimitHeaders.ResetFormat format) {
      this.resetFormat = Objects.requireNonNull(format, "resetFormat");
      return this;
    }

    /** False throws the kill switch: nothing is limited. */
    public Builder enabled(boolean enabled) {
      this.enabled = enabled;
      return this;
    }

    public RuleSet build() {
      return new RuleSet(this);
    }
  }
}
