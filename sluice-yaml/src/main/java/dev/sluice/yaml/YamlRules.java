package dev.sluice.yaml;

import dev.sluice.http.RuleSet;
import java.io.IOException;
import java.io.InputStream;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.nodes.Node;

/**
 * Reads a rules file (docs/RULES.md). Every error names the file, line and field:
 *
 * <pre>{@code
 * defaults: { algorithm: sliding-window, key: [user, ip], onStoreFailure: allow }
 * headers: [x-ratelimit, ietf]
 * resetFormat: delta            # or epoch
 * trustedProxies: [10.0.0.0/8]
 * forwardedHeader: X-Forwarded-For   # or Forwarded: the one header the trusted proxies set
 * ipv6Prefix: 64                # IPv6 clients are keyed by this many leading bits
 * enabled: true                 # false throws the kill switch
 * rules:
 *   - id: get-product
 *     match: { methods: [GET], path: "/v1/organizations/{orgId}/product/*" }   # or prefix: /api
 *     key: [path:orgId]
 *     tiers: [ { limit: 1000, period: 10s }, { limit: 50, period: 1s } ]
 *     shadow: false
 *     enabled: true
 * }</pre>
 *
 * Periods are a whole number with a unit: {@code ms}, {@code s}, {@code m}, {@code h} or {@code d}.
 * Stateless.
 */
public final class YamlRules {

  private YamlRules() {}

  /**
   * Reads a rules file.
   *
   * @throws RulesException naming the line and field at fault
   * @throws UncheckedIOException if the file cannot be read
   */
  public static RuleSet load(Path file) {
    try {
      return parse(Files.readString(file, StandardCharsets.UTF_8), file.toString());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read rules file " + file + ": " + describe(e), e);
    }
  }

  /** An I/O problem in words: "no such file" rather than the bare path the JDK gives. */
  static String describe(IOException e) {
    if (e instanceof java.nio.file.NoSuchFileException) {
      return "no such file";
    }
    if (e instanceof java.nio.file.AccessDeniedException) {
      return "permission denied";
    }
    return e.getMessage() == null ? e.toString() : e.getMessage();
  }

  /** Reads rules from a class path resource such as {@code sluice-rules.yaml}. */
  public static RuleSet loadResource(String resource) {
    try (InputStream in = YamlRules.class.getClassLoader().getResourceAsStream(resource)) {
      if (in == null) {
        throw new UncheckedIOException(new IOException("no class path resource " + resource));
      }
      return parse(new String(in.readAllBytes(), StandardCharsets.UTF_8), resource);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Reads rules from text; {@code name} stands for the file in error messages.
   *
   * @throws RulesException naming the line and field at fault
   */
  public static RuleSet parse(String yaml, String name) {
    return parse(yaml, name, null);
  }

  /**
   * {@link #parse(String, String)}, refusing an {@code app:NAME} key whose {@code NAME} is not in
   * {@code resolvers} (null: any) with its line and field.
   */
  static RuleSet parse(String yaml, String name, Set<String> resolvers) {
    Node root;
    try {
      LoaderOptions options = new LoaderOptions();
      options.setAllowDuplicateKeys(false);
      options.setMaxAliasesForCollections(10);
      root = new Yaml(new SafeConstructor(options)).compose(new StringReader(yaml));
    } catch (MarkedYAMLException e) {
      int line = e.getProblemMark() == null ? 1 : e.getProblemMark().getLine() + 1;
      throw new RulesException(name, line, "(syntax)", e.getProblem());
    } catch (RuntimeException e) {
      throw new RulesException(name, 1, "(syntax)", String.valueOf(e.getMessage()));
    }
    if (root == null) {
      throw new RulesException(name, 1, "rules", "the file is empty");
    }
    return new RuleSetReader(name, resolvers).ruleSet(root);
  }
}
