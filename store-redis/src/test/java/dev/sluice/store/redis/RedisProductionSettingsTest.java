package dev.sluice.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterStoreProvider;
import dev.sluice.spi.CounterUpdate;
import dev.sluice.spi.Counts;
import dev.sluice.testkit.RedisServer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The settings a production Redis asks for, each against a real {@code redis-server}: TLS with a
 * certificate from a private CA ({@code rediss://}), a {@code requirepass} password, an ACL user
 * allowed only the scripting commands and the keys under its prefix, and the prefix itself.
 */
class RedisProductionSettingsTest {

  private static final long W = System.currentTimeMillis() / 1_000;
  private static final List<CounterUpdate> ONE = List.of(new CounterUpdate("r", "k", 1_000, W, 1));

  @TempDir Path dir;

  /** Runs openssl in {@link #dir}; a throwaway CA and a server certificate for 127.0.0.1. */
  private void openssl(String... args) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>(List.of("openssl"));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, p.waitFor(), String.join(" ", cmd) + ": " + out);
  }

  private Path certificates() throws Exception {
    openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=test CA",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem");
    openssl(
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=localhost",
        "-keyout",
        "server.key",
        "-out",
        "server.csr");
    Files.writeString(dir.resolve("san.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
    openssl(
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "1",
        "-extfile",
        "san.ext",
        "-out",
        "server.pem");
    return dir.resolve("ca.pem");
  }

  @Test
  void tlsWithAPrivateCaCounts() throws Exception {
    Path ca = certificates();
    int tlsPort = RedisServer.freePort();
    try (RedisServer server =
        RedisServer.start(
            "--tls-port", Integer.toString(tlsPort),
            "--tls-cert-file", dir.resolve("server.pem").toString(),
            "--tls-key-file", dir.resolve("server.key").toString(),
            "--tls-ca-cert-file", ca.toString(),
            "--tls-auth-clients", "no")) {
      String uri = "rediss://127.0.0.1:" + tlsPort;
      try (CounterStore store =
          CounterStoreProvider.create(
              "redis",
              Map.of("uri", uri, "trustedCertificates", ca.toString(), "operationTimeout", "2s"),
              getClass().getClassLoader())) {
        assertEquals(Counts.of(1, 0), store.increment(ONE));
        assertEquals(Counts.of(2, 0), store.increment(ONE));
      }
      // The count went over TLS to this server.
      assertTrue(server.cli("KEYS", "sluice:*").contains("sluice:"), server.cli("KEYS", "*"));
      // Without the CA the server's certificate is not trusted: nothing is counted.
      try (RedisCounterStore untrusted =
          RedisCounterStore.builder()
              .uri(uri)
              .connectTimeout(Duration.ofMillis(500))
              .storeClock(false)
              .build()) {
        assertThrows(RuntimeException.class, () -> untrusted.increment(ONE));
      }
    }
  }

  @Test
  void aRequirepassPasswordAlone() {
    try (RedisServer server = RedisServer.start("--requirepass", "s3cret");
        CounterStore store =
            CounterStoreProvider.create(
                "redis",
                Map.of("uri", server.address(), "password", "s3cret", "operationTimeout", "2s"),
                getClass().getClassLoader())) {
      assertEquals(Counts.of(1, 0), store.increment(ONE));
    }
  }

  @Test
  void anAclUserLimitedToItsPrefixAndToScripts() {
    // The user may run scripts, and the commands they call, on keys under "app:" only: what the
    // store needs.
    try (RedisServer server =
        RedisServer.start(
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
            "+@scripting",
            "+@connection",
            // and what the scripts call
            "+get",
            "+set",
            "+incrby",
            "+decrby",
            "+del",
            "+info",
            "+exists",
            "+pexpire",
            "+persist",
            "+hget",
            "+hmget",
            "+hset",
            "+time")) {
      try (RedisCounterStore store =
          RedisCounterStore.builder()
              .uri(server.uri())
              .credentials("limiter", "s3cret")
              .prefix("app")
              .operationTimeout(Duration.ofSeconds(2))
              .build()) {
        assertEquals(Counts.of(1, 0), store.increment(ONE));
        assertEquals(Counts.of(2, 0), store.increment(ONE));
        store.decrement(ONE);
        assertTrue(store.clock().orElseThrow().errorMillis() >= 0, "TIME through a script");
        var values = store.sharedValues().orElseThrow();
        assertTrue(values.compareAndSet("knob", 0, "7", Duration.ofMinutes(1)));
        assertEquals("7", values.get("knob").orElseThrow().value());
      }
      // Under another prefix the same user is refused its keys: nothing is counted.
      try (RedisCounterStore outside =
          RedisCounterStore.builder()
              .uri(server.uri())
              .credentials("limiter", "s3cret")
              .operationTimeout(Duration.ofSeconds(2))
              .storeClock(false)
              .build()) {
        RuntimeException e = assertThrows(RuntimeException.class, () -> outside.increment(ONE));
        assertTrue(String.valueOf(e.getMessage()).contains("NOPERM"), e.toString());
      }
    }
  }

  @Test
  void twoPrefixesShareNoCounter() {
    try (RedisServer server = RedisServer.start();
        RedisCounterStore a =
            RedisCounterStore.builder()
                .uri(server.uri())
                .prefix("a")
                .operationTimeout(Duration.ofSeconds(2))
                .build();
        RedisCounterStore b =
            RedisCounterStore.builder()
                .uri(server.uri())
                .prefix("b")
                .operationTimeout(Duration.ofSeconds(2))
                .build()) {
      a.increment(ONE);
      a.increment(ONE);
      assertEquals(Counts.of(1, 0), b.increment(ONE));
      String keys = server.cli("KEYS", "*");
      assertTrue(keys.lines().allMatch(k -> k.startsWith("a:") || k.startsWith("b:")), keys);
      assertFalse(keys.contains("sluice:"), keys);
    }
  }
}
