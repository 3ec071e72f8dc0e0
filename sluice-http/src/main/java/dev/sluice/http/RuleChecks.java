package dev.sluice.http;

import dev.sluice.Algorithm;
import dev.sluice.OnStoreFailure;
import dev.sluice.Sync;
import dev.sluice.Tier;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/** What makes a {@link Rule} valid, checked as it is built: each message names the rule. */
final class RuleChecks {

  /** Why a rule with {@code sync} takes no {@link OnStoreFailure#LOCAL}. */
  static final String LOCAL_WITH_SYNC =
      "onStoreFailure: local needs no sync: two-layer counting already limits locally at"
          + " limit ÷ instances while the store is down, and onStoreFailure says what happens past"
          + " that share (allow or reject)";

  private RuleChecks() {}

  /**
   * A rule's id: not empty, printable ASCII.
   *
   * @throws IllegalArgumentException if it is not
   */
  static String id(String id) {
    Objects.requireNonNull(id, "id");
    if (id.isBlank()) {
      throw new IllegalArgumentException("id must not be empty");
    }
    for (int i = 0; i < id.length(); i++) {
      char c = id.charAt(i);
      if (c < 0x20 || c > 0x7e) {
        throw new IllegalArgumentException(
            String.format(
                "id '%s': printable ASCII only (found U+%04X): it names the rule in the"
                    + " RateLimit headers, which carry nothing else",
                id, (int) c));
      }
    }
    return id;
  }

  /**
   * The settings of rule {@code id} together: its tiers for its algorithm, a concurrency rule's one
   * limit, staggering and two-layer counting only where the algorithm takes them.
   *
   * @throws IllegalArgumentException naming the first that does not fit
   */
  static void settings(
      String id,
      Algorithm algorithm,
      List<Tier> tiers,
      boolean staggerWindows,
      Sync sync,
      OnStoreFailure onStoreFailure) {
    Tier.checkTiers(tiers);
    if (algorithm == Algorithm.CONCURRENCY && (tiers.size() != 1 || sync != null)) {
      throw new IllegalArgumentException(
          "a concurrency rule has one limit and no sync (rule '" + id + "')");
    }
    algorithm.checkTiers(tiers);
    algorithm.checkStagger(staggerWindows);
    algorithm.checkSync(sync != null);
    if (sync != null && onStoreFailure == OnStoreFailure.LOCAL) {
      throw new IllegalArgumentException(LOCAL_WITH_SYNC + " (rule '" + id + "')");
    }
  }

  /**
   * Parses key sources, each {@code path:NAME} checked against the pattern's captures.
   *
   * @throws IllegalArgumentException naming the first bad one
   */
  static List<KeySource> keySources(List<String> key, PathPattern pattern, String path) {
    List<KeySource> sources = new ArrayList<>();
    for (String k : key) {
      KeySource source = KeySource.parse(k);
      if (source.kind == KeySource.Kind.PATH && !pattern.captureNames().contains(source.name)) {
        throw new IllegalArgumentException(
            "key source '" + k + "' names no {" + source.name + "} in path " + path);
      }
      sources.add(source);
    }
    return List.copyOf(sources);
  }
}
