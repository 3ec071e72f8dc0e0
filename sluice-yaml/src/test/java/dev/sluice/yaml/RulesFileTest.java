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
}
