package dev.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.example.Demo;
import dev.sluice.http.PathSpellings;
import dev.sluice.spi.FakeClock;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.IntFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every way around a limit we know of, tried against the demo server as an abusive client would: a
 * rules file whose only key is {@code ip}, 127.0.0.1 as the trusted proxy (the client is what the
 * proxy appended to X-Forwarded-For), 5 requests per hour. Each trick sends 20 requests, each
 * spelled or forged anew; the limit holds when at most 5 pass. The table goes to
 * docs/RELIABILITY.md.
 */
class BypassTest {

  private static final int LIMIT = 5;
  private static final int TRIES = 20;

  private static final String RULES =
      """
      trustedProxies: [127.0.0.1/32]
      forwardedHeader: X-Forwarded-For
      rules:
        - id: report
          match: { methods: [GET], path: /api/v1/report }
          key: [ip]
          algorithm: fixed-window
          tiers: [ { limit: 5, period: 1h } ]
        - id: lead
          match: { methods: [POST], path: "/api/v1/lead/{id}" }
          key: [ip]
          algorithm: fixed-window
          tiers: [ { limit: 5, period: 1h } ]
        - id: product
          match: { methods: [GET], path: "/v1/organizations/{orgId}/product/*" }
          key: [ip]
          algorithm: fixed-window
          tiers: [ { limit: 5, period: 1h } ]
        - id: tenant
          match: { methods: [GET], path: "/v1/organizations/{orgId}/product/*" }
          key: [path:orgId]
          algorithm: fixed-window
          tiers: [ { limit: 5, period: 1h } ]
      """;

  /** One trick: request {@code i} as raw HTTP/1.1 head lines (request line first, no Host). */
  private record Trick(String name, IntFunction<List<String>> request) {}

  private static List<String> get(String path, String... headers) {
    List<String> lines = new ArrayList<>();
    lines.add("GET " + path + " HTTP/1.1");
    lines.addAll(List.of(headers));
    return lines;
  }

  private static List<String> post(String path, String... headers) {
    List<String> lines = new ArrayList<>();
    lines.add("POST " + path + " HTTP/1.1");
    lines.add("Content-Length: 0");
    lines.addAll(List.of(headers));
    return lines;
  }

  private static List<Trick> tricks() {
    List<Trick> tricks = new ArrayList<>();
    for (int n = 0; n < PathSpellings.STRUCTURE.size(); n++) {
      String spelling = PathSpellings.STRUCTURE.get(n);
      String client = "X-Forwarded-For: 198.51.101." + (n + 1);
      tricks.add(
          new Trick(
              "`POST /api/v1/lead/" + spelling + "`",
              i -> post("/api/v1/lead/" + spelling, client)));
    }
    List<String> products = List.of("%2e%2e", "%3B1", "1%2F..");
    for (int n = 0; n < products.size(); n++) {
      String spelling = products.get(n);
      String client = "X-Forwarded-For: 198.51.102." + (n + 1);
      // A new tenant per request, so only the per-address rule can hold the limit.
      tricks.add(
          new Trick(
              "`GET /v1/organizations/tN/product/" + spelling + "` (a new tenant each time)",
              i -> get("/v1/organizations/t" + i + "/product/" + spelling, client)));
    }
    tricks.addAll(classicTricks());
    return tricks;
  }

  private static List<Trick> classicTricks() {
    return List.of(
        new Trick(
            "`HEAD` instead of `GET`",
            i -> List.of("HEAD /api/v1/report HTTP/1.1", "X-Forwarded-For: 198.51.100.1")),
        new Trick(
            "a new path parameter each time: `/api/v1/report;x=N`",
            i -> get("/api/v1/report;x=" + i, "X-Forwarded-For: 198.51.100.2")),
        new Trick(
            "`;jsessionid=N` on the last segment",
            i -> get("/api/v1/report;jsessionid=" + i, "X-Forwarded-For: 198.51.100.3")),
        new Trick(
            "path parameters on every segment: `/api;a=N/v1;b/report`",
            i -> get("/api;a=" + i + "/v1;b/report", "X-Forwarded-For: 198.51.100.4")),
        new Trick(
            "percent-encoded letters: `/api/v1/%72eport`",
            i -> get("/api/v1/%72eport", "X-Forwarded-For: 198.51.100.5")),
        new Trick(
            "an encoded `;`: `/api/v1/report%3Bx=N`",
            i -> get("/api/v1/report%3Bx=" + i, "X-Forwarded-For: 198.51.100.6")),
        new Trick(
            "dot segments and doubled slashes: `//api/./v1/x/../report/`",
            i -> get("//api/./v1/x/../report/", "X-Forwarded-For: 198.51.100.7")),
        new Trick(
            "a client-sent `Forwarded: for=NEW` behind a proxy that appends X-Forwarded-For",
            i ->
                get(
                    "/api/v1/report",
                    "Forwarded: for=203.0.113." + i,
                    "X-Forwarded-For: 198.51.100.8")),
        new Trick(
            "a forged first X-Forwarded-For hop: `X-Forwarded-For: NEW, client`",
            i -> get("/api/v1/report", "X-Forwarded-For: 203.0.113." + i + ", 198.51.100.9")),
        new Trick(
            "IPv4 and IPv4-mapped IPv6 by turns: `198.51.100.10` / `::ffff:198.51.100.10`",
            i ->
                get(
                    "/api/v1/report",
                    "X-Forwarded-For: " + (i % 2 == 0 ? "" : "::ffff:") + "198.51.100.10")),
        new Trick(
            "IPv6 spellings of one address: `2001:db8::a` / `2001:DB8:0:0:0:0:0:A` / `[2001:db8::a]:N`",
            i ->
                get(
                    "/api/v1/report",
                    "X-Forwarded-For: "
                        + List.of(
                                "2001:db8::a",
                                "2001:DB8:0:0:0:0:0:A",
                                "[2001:db8::a]:" + (1000 + i))
                            .get(i % 3))),
        new Trick(
            "a new IPv6 address in one /64 each time: `2001:db8:1:2::N`",
            i ->
                get(
                    "/api/v1/report",
                    "X-Forwarded-For: 2001:db8:1:2::" + Integer.toHexString(i + 1))),
        new Trick(
            "a name or junk as the client: `X-Forwarded-For: 999.1.1.N` (no DNS lookup)",
            i -> get("/api/v1/report", "X-Forwarded-For: 999.1.1." + i)),
        new Trick(
            "a new `X-Api-Key` each time (the rule keys on ip only)",
            i ->
                get(
                    "/api/v1/report",
                    "X-Api-Key: invented-" + i,
                    "X-Forwarded-For: 198.51.100.11")));
  }

  @Test
  void noTrickGetsMoreThanTheLimitThrough(@TempDir Path dir) throws Exception {
    Report.line(
        "bypass attempts against the demo: key [ip], 127.0.0.1 trusted, limit "
            + LIMIT
            + " per hour, "
            + TRIES
            + " requests a trick:");
    Report.line("| trick | statuses | passed |");
    Report.line("|---|---|---:|");
    List<String> bypasses = new ArrayList<>();
    try (Demo demo = demo(dir)) {
      for (Trick t : tricks()) {
        java.util.Map<Integer, Integer> statuses = new java.util.TreeMap<>();
        int passed = 0;
        for (int i = 0; i < TRIES; i++) {
          int status = RawHttp.status(demo.port(), t.request().apply(i));
          statuses.merge(status, 1, Integer::sum);
          passed += status / 100 == 2 ? 1 : 0;
        }
        Report.line(
            String.format(
                Locale.ROOT,
                "| %s | %s | %d of %d |",
                t.name(),
                statuses.toString().replace("{", "").replace("}", "").replace("=", "×"),
                passed,
                TRIES));
        if (passed > LIMIT) {
          bypasses.add(t.name() + ": " + passed);
        }
      }
    }
    assertTrue(bypasses.isEmpty(), "bypasses: " + bypasses);
  }

  /**
   * A {@code path:NAME} capture spelled with encoded separators is the one segment the resource
   * receives: it is never resolved into another tenant's name and charged to that tenant.
   */
  @Test
  void aCaptureSpelledWithEncodedSeparatorsNeverChargesAnotherTenant(@TempDir Path dir)
      throws Exception {
    try (Demo demo = demo(dir)) {
      for (int i = 0; i < 5; i++) {
        String client = "X-Forwarded-For: 198.51.103." + (i + 1);
        RawHttp.status(
            demo.port(), get("/v1/organizations/x" + i + "%2F..%2Fvictim/product/1", client));
      }
      assertEquals(
          200,
          RawHttp.status(
              demo.port(),
              get("/v1/organizations/victim/product/1", "X-Forwarded-For: 198.51.103.99")),
          "the tenant 'victim' has spent nothing of its quota");
    }
  }

  /** A request target that is not a URI gets a 400 and no stack trace, limited or not. */
  @Test
  void aMalformedRequestTargetGetsA400WithNoStackTrace(@TempDir Path dir) throws Exception {
    try (Demo demo = demo(dir)) {
      for (String target :
          List.of(
              "/api/v1/lead/%zz",
              "/api/v1/lead/a%",
              "/api/v1/lead/a\\b",
              "/api/v1/report?q=%zz",
              "/api/v1/%",
              "/%e9t%")) {
        String response = RawHttp.response(demo.port(), "POST " + target + " HTTP/1.1");
        assertTrue(response.startsWith("HTTP/1.1 400"), target + ": " + response);
        assertFalse(response.contains("Exception"), target + ": " + response);
        assertFalse(response.contains("at org."), target + ": " + response);
      }
    }
  }

  /** The demo on a free port with {@link #RULES}, on a fake clock, its console discarded. */
  private static Demo demo(Path dir) throws Exception {
    Path rules = dir.resolve("rules.yaml");
    Files.writeString(rules, RULES);
    return Demo.start(
        new Demo.Options().host("127.0.0.1").port(0).rules(rules).clock(new FakeClock()),
        new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
  }
}
