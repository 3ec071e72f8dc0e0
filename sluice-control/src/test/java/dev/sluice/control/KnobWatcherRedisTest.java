package dev.sluice.control;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.store.redis.RedisCounterStore;
import dev.sluice.testkit.RedisServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The knob reader on a real Redis whose ACL user may not read the knobs: the log line says what
 * Redis said, once a minute, and not that Redis did not answer.
 */
class KnobWatcherRedisTest {

  @Test
  void aUserWithoutTheScriptingCommandsIsLoggedAsNoperm() {
    assertLoggedOnce("NOPERM", "+get", "+incrby");
  }

  @Test
  void aUserWhoseScriptMayNotReadTheValueIsLoggedWithRedissError() {
    assertLoggedOnce("can't run this command", "+@scripting");
  }

  /** Reads the knobs twice as a user with {@code allowed}; one line names {@code error}. */
  private static void assertLoggedOnce(String error, String... allowed) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "--user",
                "default",
                "off",
                "--user",
                "limiter",
                "on",
                ">s3cret",
                "~app:*",
                "resetchannels",
                "-@all",
                "+@connection"));
    args.addAll(List.of(allowed));
    try (RedisServer server = RedisServer.start(args.toArray(String[]::new));
        RedisCounterStore store =
            RedisCounterStore.builder()
                .uri(server.uri())
                .credentials("limiter", "s3cret")
                .prefix("app")
                .operationTimeout(Duration.ofSeconds(5))
                .storeClock(false)
                .build()) {
      PrintStream err = System.err;
      ByteArrayOutputStream captured = new ByteArrayOutputStream();
      String log;
      try {
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        KnobWatcher watcher = KnobWatcher.manual(store.sharedValues().orElseThrow());
        watcher.refresh();
        assertEquals(Knobs.NONE, watcher.current(), "no knobs read");
      } finally {
        System.setErr(err);
        log = captured.toString(StandardCharsets.UTF_8);
      }
      List<String> lines =
          Arrays.stream(log.split("\n")).filter(l -> l.contains("cannot read the knobs")).toList();
      assertEquals(1, lines.size(), "one line for two reads, at most one a minute:\n" + log);
      String line = lines.get(0);
      assertTrue(line.contains(error), "Redis's own error: " + line);
      assertFalse(line.contains("did not answer"), "not a timeout: " + line);
    }
  }
}
