package dev.sluice.rules;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.RequestLimiter;
import dev.sluice.spi.ReferenceCounterStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RulesFileTest {

  @TempDir
  Path dir;

  private static String rules(int limit) {
    return "rules:\n  - { id: r, key: ip, tiers: [ { limit: " + limit + ", period: 1m } ] }\n";
  }

  @Test
  void aGoodEditTakesEffectAndABadOneLeavesTheLastGoodRules() throws Exception {
    Path file = dir.resolve("rules.yaml");
    Files.writeString(file, rules(5));
    RequestLimiter limiter = RequestLimiter.builder(new ReferenceCounterStore()).rules(YamlRules.load(file)).build();
    try (RulesFile watcher = RulesFile.watch(file, limiter, Duration.ZERO)) {
      assertFalse(watcher.reload(), "unchanged");
      Files.writeString(file, rules(7));
      assertTrue(watcher.reload());
      assertEquals(7, limiter.rules().rule("r").orElseThrow().tiers().get(0).limit());
      Files.writeString(file, rules(0));
      assertFalse(watcher.reload());
      assertEquals(7, limiter.rules().rule("r").orElseThrow().tiers().get(0).limit(), "the last good rules stay");
      Files.writeString(file, rules(9).replace("rules:", "enabled: false\nrules:"));
      assertTrue(watcher.reload());
      assertFalse(limiter.rules().enabled(), "the kill switch from the file");
    }
  }
}
