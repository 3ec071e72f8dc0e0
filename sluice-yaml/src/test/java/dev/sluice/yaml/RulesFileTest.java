package dev.sluice.yaml;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.http.RequestLimiter;
import dev.sluice.spi.ReferenceCounterStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RulesFileTest {

  @TempDir Path dir;

  private static String rules(int limit) {
    return "rules:\n  - { id: r, key: ip, tiers: [ { limit: " + limit + ", period: 1m } ] }\n";
  }

  @Test
  void aGoodEditTakesEffectAndABadOneLeavesTheLastGoodRules() throws Exception {
    Path file = dir.resolve("rules.yaml");
    Files.writeString(file, rules(5));
    RequestLimiter limiter =
        RequestLimiter.builder(new ReferenceCounterStore()).rules(YamlRules.load(file)).build();
    try (RulesFile watcher = RulesFile.watch(file, limiter, Duration.ZERO)) {
      assertFalse(watcher.reload(), "unchanged");
      Files.writeString(file, rules(7));
      assertTrue(watcher.reload());
      assertEquals(7, limiter.rules().rule("r").orElseThrow().tiers().get(0).limit());
      Files.writeString(file, rules(0));
      assertFalse(watcher.reload());
      assertEquals(
          7,
          limiter.rules().rule("r").orElseThrow().tiers().get(0).limit(),
          "the last good rules stay");
      Files.writeString(file, rules(9).replace("rules:", "enabled: false\nrules:"));
      assertTrue(watcher.reload());
      assertFalse(limiter.rules().enabled(), "the kill switch from the file");
    }
  }

  @Test
  void aMissingFileSaysSoAndADeletedOneIsLoggedOnceUntilItChanges() throws Exception {
    Path file = dir.resolve("rules.yaml");
    java.io.UncheckedIOException missing =
        org.junit.jupiter.api.Assertions.assertThrows(
            java.io.UncheckedIOException.class, () -> YamlRules.load(file));
    assertEquals("cannot read rules file " + file + ": no such file", missing.getMessage());

    Files.writeString(file, rules(5));
    RequestLimiter limiter =
        RequestLimiter.builder(new ReferenceCounterStore()).rules(YamlRules.load(file)).build();
    java.io.PrintStream err = System.err;
    java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
    try (RulesFile watcher = RulesFile.watch(file, limiter, Duration.ZERO)) {
      System.setErr(
          new java.io.PrintStream(captured, true, java.nio.charset.StandardCharsets.UTF_8));
      Files.delete(file);
      for (int i = 0; i < 5; i++) {
        assertFalse(watcher.reload());
      }
      Files.writeString(file, rules(6));
      assertTrue(watcher.reload());
      Files.delete(file);
      assertFalse(watcher.reload());
    } finally {
      System.setErr(err);
    }
    String log = captured.toString(java.nio.charset.StandardCharsets.UTF_8);
    assertEquals(
        2,
        log.split("no such file", -1).length - 1,
        "once per disappearance, not per check:\n" + log);
    assertEquals(6, limiter.rules().rule("r").orElseThrow().tiers().get(0).limit());
  }

  /** Reloads {@code watcher} after {@code file} is written with {@code text}; what it logged. */
  private static String reloadLogged(RulesFile watcher, Path file, String text) throws Exception {
    java.io.PrintStream err = System.err;
    java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
    try {
      System.setErr(
          new java.io.PrintStream(captured, true, java.nio.charset.StandardCharsets.UTF_8));
      Files.writeString(file, text);
      assertFalse(watcher.reload(), "the edit is refused");
    } finally {
      System.setErr(err);
    }
    return captured.toString(java.nio.charset.StandardCharsets.UTF_8);
  }

  @Test
  void anEditKeyedOnAnUnknownResolverIsOneLineNamingItsFileLineAndField() throws Exception {
    Path file = dir.resolve("rules.yaml");
    Files.writeString(file, rules(5));
    RequestLimiter limiter =
        RequestLimiter.builder(new ReferenceCounterStore())
            .keyResolver("customer", r -> java.util.Optional.of("c"))
            .rules(YamlRules.load(file))
            .build();
    try (RulesFile watcher = RulesFile.watch(file, limiter, Duration.ZERO)) {
      String log =
          reloadLogged(
              watcher,
              file,
              """
              rules:
                - id: r
                  key: [app:customer, ip]
                  tiers: [ { limit: 6, period: 1m } ]
                - id: s
                  key: [ip, app:account]
                  tiers: [ { limit: 8, period: 1m } ]
              """);
      java.util.List<String> lines = log.lines().filter(l -> !l.isBlank()).toList();
      assertEquals(1, lines.size(), "one line:\n" + log);
      assertTrue(
          lines.get(0).contains(file + ":6: rules[1].key[1]: "),
          "the file, the line and the field: " + log);
      assertTrue(lines.get(0).contains("app:account"), log);
      assertFalse(log.contains("Exception"), "no stack trace: " + log);
      assertEquals(
          5,
          limiter.rules().rule("r").orElseThrow().tiers().get(0).limit(),
          "the last good rules stay");
      assertTrue(limiter.rules().rule("s").isEmpty());

      // From the defaults: the line of the default key.
      log =
          reloadLogged(
              watcher,
              file,
              """
              defaults:
                key: [app:account]
              rules:
                - { id: r, tiers: [ { limit: 6, period: 1m } ] }
              """);
      assertTrue(log.contains(file + ":2: defaults.key[0]: "), log);
      assertFalse(log.contains("Exception"), "no stack trace: " + log);
      assertEquals(5, limiter.rules().rule("r").orElseThrow().tiers().get(0).limit());

      Files.writeString(file, rules(6).replace("key: ip", "key: app:customer"));
      assertTrue(watcher.reload(), "a resolver that is registered");
      assertEquals(6, limiter.rules().rule("r").orElseThrow().tiers().get(0).limit());
    }
  }

  @Test
  void anEditTheLimiterRefusesIsOneLineNamingTheFile() throws Exception {
    Path file = dir.resolve("rules.yaml");
    Files.writeString(file, rules(5));
    RequestLimiter limiter =
        RequestLimiter.builder(new ReferenceCounterStore()).rules(YamlRules.load(file)).build();
    limiter.bind(
        java.util.List.of(
            dev.sluice.http.Rule.builder("bound").tier(1, Duration.ofMinutes(1)).build()));
    try (RulesFile watcher = RulesFile.watch(file, limiter, Duration.ZERO)) {
      String log = reloadLogged(watcher, file, rules(6).replace("id: r", "id: bound"));
      java.util.List<String> lines = log.lines().filter(l -> !l.isBlank()).toList();
      assertEquals(1, lines.size(), "one line:\n" + log);
      assertTrue(lines.get(0).contains(file + ": "), log);
      assertTrue(lines.get(0).contains("'bound'"), log);
      assertFalse(log.contains("Exception"), "no stack trace: " + log);
      assertEquals(5, limiter.rules().rule("r").orElseThrow().tiers().get(0).limit());
    }
  }
}
