package dev.sluice.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.testkit.Memcached;
import dev.sluice.testkit.MemcachedServer;
import dev.sluice.testkit.RedisServer;
import java.io.IOException;
import java.net.ServerSocket;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

@Memcached
class KnobsCommandTest {

  private static MemcachedServer memcached;

  @BeforeAll
  static void start(MemcachedServer started) {
    memcached = started;
  }

  private static Run knobs(String... args) {
    String[] all = new String[args.length + 1];
    all[0] = "knobs";
    System.arraycopy(args, 0, all, 1, args.length);
    return Run.of(all);
  }

  @Test
  void setGetAndClearRoundTripThroughMemcached() {
    String m = memcached.address();
    Run set =
        knobs("set", "--memcached", m, "--prefix", "t1", "rule:search", "limit=2", "shadow=true");
    assertEquals(0, set.code(), set.err());
    assertEquals("rule:search limit=2 shadow=true\n", set.out());
    assertEquals(
        0, knobs("set", "--memcached", m, "--prefix", "t1", "global", "enabled=false").code());
    assertEquals(
        "rule:search limit=2 shadow=true\nglobal enabled=false\n",
        knobs("get", "--memcached", m, "--prefix", "t1").out());
    assertEquals(
        "global enabled=false\n", knobs("get", "--memcached", m, "--prefix", "t1", "global").out());
    assertEquals(
        "rule:search limit=2\n",
        knobs("clear", "--memcached", m, "--prefix", "t1", "rule:search", "shadow").out());
    knobs("clear", "--memcached", m, "--prefix", "t1", "rule:search");
    knobs("clear", "--memcached", m, "--prefix", "t1", "global");
    assertEquals("(no knobs set)\n", knobs("get", "--memcached", m, "--prefix", "t1").out());
  }

  @Test
  void setGetAndClearRoundTripThroughRedis() {
    try (RedisServer redis = RedisServer.start()) {
      String r = redis.address();
      Run set = knobs("set", "--redis", r, "--prefix", "t1", "rule:search", "limit=2");
      assertEquals(0, set.code(), set.err());
      assertEquals("rule:search limit=2\n", knobs("get", "--redis", r, "--prefix", "t1").out());
      assertEquals(
          "rule:search limit=2\n", knobs("get", "--redis", "redis://" + r, "--prefix", "t1").out());
      knobs("clear", "--redis", r, "--prefix", "t1", "rule:search");
      assertEquals("(no knobs set)\n", knobs("get", "--redis", r, "--prefix", "t1").out());
      knobs("get", "--redis", r, "--memcached", memcached.address()).failsWithOneLine(2);
    }
  }

  @Test
  void badInputIsOneLineAndNothingIsWritten() {
    String m = memcached.address();
    assertTrue(
        knobs("set", "--memcached", m, "--prefix", "t2", "rule:x", "rate=3")
            .failsWithOneLine(2)
            .err()
            .contains("unknown field 'rate' for rule"));
    assertTrue(
        knobs("set", "--memcached", m, "--prefix", "t2", "rule:x", "limit=-1")
            .failsWithOneLine(2)
            .err()
            .contains("at least 1"));
    assertTrue(
        knobs("set", "--memcached", m, "--prefix", "t2", "rules:x", "limit=1")
            .failsWithOneLine(2)
            .err()
            .contains("unknown target"));
    knobs("set", "--memcached", m, "--prefix", "t2", "throttle:x", "rate").failsWithOneLine(2);
    knobs("set", "--prefix", "t2", "throttle:x", "rate=1").failsWithOneLine(2);
    assertEquals("(no knobs set)\n", knobs("get", "--memcached", m, "--prefix", "t2").out());
  }

  @Test
  void withTheRulesFileAKnobTheRuleCannotTakeIsRefusedBeforeWriting(
      @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws IOException {
    java.nio.file.Path rules = dir.resolve("rules.yaml");
    java.nio.file.Files.writeString(
        rules,
        """
        rules:
          - id: search-bucket
            match: { path: /search }
            key: [ip]
            algorithm: token-bucket
            tiers: [ { limit: 60, period: 1m, burst: 5 } ]
        """);
    String m = memcached.address();
    java.util.function.BiFunction<String, String, Run> set =
        (target, field) ->
            knobs(
                "set",
                "--memcached",
                m,
                "--prefix",
                "t3",
                "--rules",
                rules.toString(),
                target,
                field);
    assertTrue(
        set.apply("rule:search-bucket", "limit=2000000")
            .failsWithOneLine(2)
            .err()
            .contains("1000000"));
    assertTrue(
        set.apply("rule:nope", "limit=2")
            .failsWithOneLine(2)
            .err()
            .contains("no rule with that id"));
    assertEquals("(no knobs set)\n", knobs("get", "--memcached", m, "--prefix", "t3").out());
    Run ok = set.apply("rule:search-bucket", "limit=120");
    assertEquals(0, ok.code(), ok.err());
    knobs("clear", "--memcached", m, "--prefix", "t3", "rule:search-bucket");
  }

  @Test
  void anUnreachableMemcachedIsOneLineAndExitOne() throws IOException {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    Run r =
        knobs(
                "set",
                "--memcached",
                "127.0.0.1:" + port,
                "--timeout",
                "300ms",
                "global",
                "enabled=false")
            .failsWithOneLine(1);
    assertTrue(r.err().contains("did not answer"), r.err());
  }
}
