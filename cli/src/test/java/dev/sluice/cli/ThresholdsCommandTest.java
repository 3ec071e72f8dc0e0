package dev.sluice.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ThresholdsCommandTest {

  private static final DateTimeFormatter CLF =
      DateTimeFormatter.ofPattern("dd/MMM/yyyy:HH:mm:ss Z", Locale.ENGLISH)
          .withZone(ZoneOffset.UTC);
  // A multiple of 5 minutes since the epoch, so 5-minute periods start here.
  private static final Instant T0 = Instant.parse("2026-11-01T10:00:00Z");

  @TempDir Path dir;

  private record Hit(Instant at, String user, String ip) {}

  private static String clf(Hit h) {
    return h.ip()
        + " - "
        + (h.user() == null ? "-" : h.user())
        + " ["
        + CLF.format(h.at())
        + "] \"GET /api/v1/x HTTP/1.1\" 200 12 \"-\" \"curl/8\"";
  }

  private static String json(Hit h) {
    return "{\"ts\":\""
        + h.at()
        + "\",\"path\":{\"a\":[1,2]},\"who\":"
        + (h.user() == null ? "null" : "\"" + h.user() + "\"")
        + ",\"addr\":\""
        + h.ip()
        + "\"}";
  }

  /**
   * 1,000 users: 998 make 3 requests in one period, "twenty" makes 20 in one period, and "hammer"
   * makes 50 in each of 100 periods. So there are 998 + 1 + 100 = 1,099 user-periods.
   */
  private static List<Hit> knownUsage() {
    List<Hit> hits = new ArrayList<>();
    for (int u = 0; u < 998; u++) {
      for (int k = 0; k < 3; k++) {
        hits.add(new Hit(T0.plusSeconds(u % 50 * 300L + k), "user" + u, "10.0.0." + u % 250));
      }
    }
    for (int k = 0; k < 20; k++) {
      hits.add(new Hit(T0.plusSeconds(7 * 300L + k), "twenty", "10.1.0.1"));
    }
    for (int p = 0; p < 100; p++) {
      for (int k = 0; k < 50; k++) {
        hits.add(new Hit(T0.plusSeconds(p * 300L + k * 5L), "hammer", "10.2.0.1"));
      }
    }
    hits.sort((a, b) -> a.at().compareTo(b.at()));
    return hits;
  }

  private Path write(String name, List<String> lines) throws IOException {
    Path f = dir.resolve(name);
    Files.write(f, lines);
    return f;
  }

  private Path writeGzip(String name, List<String> lines) throws IOException {
    Path f = dir.resolve(name);
    try (OutputStream o = new GZIPOutputStream(Files.newOutputStream(f))) {
      o.write((String.join("\n", lines) + "\n").getBytes(StandardCharsets.UTF_8));
    }
    return f;
  }

  private static String suggestion(Run r) {
    assertEquals(0, r.code(), r.out() + r.err());
    return r.out().lines().filter(l -> l.startsWith("suggested limit:")).findFirst().orElseThrow();
  }

  @Test
  void suggestsTheSmallestLimitMeetingBothTargets() throws IOException {
    Path log = write("access.log", knownUsage().stream().map(ThresholdsCommandTest::clf).toList());

    // 20 would leave 1 user of 1,000 affected (0.1 %), but 100 of 1,099 user-periods (9.1 %).
    Run strict = Run.of("thresholds", "--period", "5m", log.toString());
    assertEquals(
        "suggested limit: 50 per 5m (affects 0% of users, 0% of user-periods)", suggestion(strict));
    assertTrue(strict.out().contains("clients: 1,000; user-periods (5m): 1,099"), strict.out());
    assertTrue(
        strict.out().contains("        20             1      0.1%           100   9.0992%"),
        strict.out());
    assertTrue(strict.out().contains("        50  user=hammer"), strict.out());

    // Allowing 10 % of user-periods, 20 is enough; 3 is not (2 users of 1,000 = 0.2 %).
    Run loose = Run.of("thresholds", "--period", "5m", "--user-periods", "90", log.toString());
    assertEquals(
        "suggested limit: 20 per 5m (affects 0.1% of users, 9.0992% of user-periods)",
        suggestion(loose));
  }

  @Test
  void periodsAreAlignedAsTheFixedWindowAlignsThem() throws IOException {
    Instant boundary = T0.plusSeconds(300);
    Path split =
        write(
            "split.log",
            List.of(
                clf(new Hit(boundary.minusSeconds(1), "a", "10.0.0.1")),
                clf(new Hit(boundary, "a", "10.0.0.1"))));
    Run r = Run.of("thresholds", "--period", "5m", split.toString());
    assertTrue(r.out().contains("user-periods (5m): 2"), r.out());
    assertTrue(suggestion(r).startsWith("suggested limit: 1 per 5m"), r.out());

    Path same =
        write(
            "same.log",
            List.of(
                clf(new Hit(boundary, "a", "10.0.0.1")),
                clf(new Hit(boundary.plusSeconds(299), "a", "10.0.0.1"))));
    Run s = Run.of("thresholds", "--period", "5m", same.toString());
    assertTrue(s.out().contains("user-periods (5m): 1"), s.out());
    assertTrue(suggestion(s).startsWith("suggested limit: 2 per 5m"), s.out());
  }

  @Test
  void gzipJsonLinesWithTheirOwnFieldNamesGiveTheSameAnswer() throws IOException {
    Path log =
        writeGzip(
            "access.json.gz", knownUsage().stream().map(ThresholdsCommandTest::json).toList());
    Run r =
        Run.of(
            "thresholds",
            "--period",
            "5m",
            "--json-time",
            "ts",
            "--json-user",
            "who",
            "--json-ip",
            "addr",
            log.toString());
    assertEquals(
        "suggested limit: 50 per 5m (affects 0% of users, 0% of user-periods)", suggestion(r));
    assertTrue(r.out().contains("malformed lines: 0"), r.out());
  }

  @Test
  void theKeyCanBeTheAddressAndAnonymousLinesFallBackToIt() throws IOException {
    List<String> lines = new ArrayList<>();
    // Two users behind one address, 3 requests each; one anonymous client, 4 requests.
    for (int k = 0; k < 3; k++) {
      lines.add(clf(new Hit(T0.plusSeconds(k), "a", "10.0.0.1")));
      lines.add(clf(new Hit(T0.plusSeconds(k), "b", "10.0.0.1")));
    }
    for (int k = 0; k < 4; k++) {
      lines.add(clf(new Hit(T0.plusSeconds(10 + k), null, "10.0.0.9")));
    }
    Path log = write("mixed.log", lines);
    Run auto = Run.of("thresholds", "--period", "1m", "--users", "100", log.toString());
    assertTrue(auto.out().contains("clients: 3;"), auto.out());
    assertTrue(auto.out().contains("         4  ip=10.0.0.9"), auto.out());
    Run byIp = Run.of("thresholds", "--period", "1m", "--key", "ip", log.toString());
    assertTrue(byIp.out().contains("clients: 2;"), byIp.out());
    assertTrue(byIp.out().contains("         6  ip=10.0.0.1"), byIp.out());
    Run byUser = Run.of("thresholds", "--period", "1m", "--key", "user", log.toString());
    assertTrue(byUser.out().contains("without a user: 4"), byUser.out());
  }

  @Test
  void malformedLinesAreCountedAndReportedButNeverFatal() throws IOException {
    List<String> lines = new ArrayList<>();
    lines.add(clf(new Hit(T0, "a", "10.0.0.1")));
    lines.add("this is not a log line");
    lines.add("10.0.0.1 - a [31/Feb/2026:10:00:00 +0000] \"GET / HTTP/1.1\" 200 1");
    lines.add("{\"time\": \"yesterday\"}");
    lines.add("{\"ip\": \"10.0.0.1\"");
    lines.add("x".repeat(3 << 20));
    lines.add(clf(new Hit(T0.plusSeconds(1), "a", "10.0.0.1")));
    Path log = write("bad.log", lines);
    Run r = Run.of("thresholds", "--period", "1m", log.toString());
    assertTrue(
        r.out()
            .contains("malformed lines: 5 (first: bad.log:2: no [dd/Mon/yyyy:HH:mm:ss +zzzz] time"),
        r.out());
    assertTrue(suggestion(r).startsWith("suggested limit: 2 per 1m"), r.out());
  }

  @Test
  void filesAreReadInTheOrderTheyWereWrittenAndLateLinesAreCounted() throws IOException {
    List<Hit> hits = knownUsage();
    List<String> lines = hits.stream().map(ThresholdsCommandTest::clf).toList();
    int half = lines.size() / 2;
    // Rotated logs named newest first: access.log holds the second half.
    Path newer = write("access.log", lines.subList(half, lines.size()));
    Path older = writeGzip("access.log.1.gz", lines.subList(0, half));
    Run r = Run.of("thresholds", "--period", "5m", newer.toString(), older.toString());
    assertEquals(
        "suggested limit: 50 per 5m (affects 0% of users, 0% of user-periods)", suggestion(r));
    assertTrue(r.out().contains("out of order (over 4 periods late): 0"), r.out());

    // A line a few periods late is still counted exactly; one far later is counted as late.
    List<String> shuffled = new ArrayList<>();
    shuffled.add(clf(new Hit(T0.plusSeconds(600), "a", "10.0.0.1")));
    shuffled.add(clf(new Hit(T0.plusSeconds(601), "a", "10.0.0.1")));
    shuffled.add(clf(new Hit(T0.plusSeconds(0), "a", "10.0.0.1")));
    shuffled.add(clf(new Hit(T0.plusSeconds(602), "a", "10.0.0.1")));
    shuffled.add(clf(new Hit(T0.plusSeconds(86_400), "a", "10.0.0.1")));
    shuffled.add(clf(new Hit(T0.plusSeconds(603), "a", "10.0.0.1")));
    Run late = Run.of("thresholds", "--period", "5m", write("late.log", shuffled).toString());
    assertTrue(late.out().contains("out of order (over 4 periods late): 1"), late.out());
    assertTrue(late.out().contains("user-periods (5m): 3"), late.out());
    assertTrue(suggestion(late).startsWith("suggested limit: 3 per 5m"), late.out());
  }

  @Test
  void theTimeZoneOfEachLineIsHonoured() {
    byte[] a = "10/Oct/2000:13:55:36 -0700".getBytes(StandardCharsets.US_ASCII);
    assertEquals(Instant.parse("2000-10-10T20:55:36Z").toEpochMilli(), AccessLog.clfTime(a, 0));
    byte[] b = "29/Feb/2024:00:00:00 +0530".getBytes(StandardCharsets.US_ASCII);
    assertEquals(Instant.parse("2024-02-28T18:30:00Z").toEpochMilli(), AccessLog.clfTime(b, 0));
    byte[] c = "29/Feb/2023:00:00:00 +0000".getBytes(StandardCharsets.US_ASCII);
    assertEquals(Long.MIN_VALUE, AccessLog.clfTime(c, 0));
  }

  @Test
  void theDistributionIsPlotted() throws IOException {
    Path log = write("access.log", knownUsage().stream().map(ThresholdsCommandTest::clf).toList());
    Path png = dir.resolve("plots/peaks.png");
    Run r = Run.of("thresholds", "--period", "5m", "--plot", png.toString(), log.toString());
    assertEquals(0, r.code(), r.err());
    byte[] head = Arrays.copyOf(Files.readAllBytes(png), 4);
    assertArrayEquals(new byte[] {(byte) 0x89, 'P', 'N', 'G'}, head);
  }

  @Test
  void badInputIsOneClearLine() throws IOException {
    Path log = write("access.log", List.of(clf(new Hit(T0, "a", "10.0.0.1"))));
    Run.of("thresholds", log.toString()).failsWithOneLine(2);
    Run.of("thresholds", "--period", "soon", log.toString()).failsWithOneLine(2);
    Run.of("thresholds", "--period", "5m", "--users", "0", log.toString()).failsWithOneLine(2);
    Run.of("thresholds", "--period", "5m", "--format", "xml", log.toString()).failsWithOneLine(2);
    Run missing =
        Run.of("thresholds", "--period", "5m", dir.resolve("nope.log").toString())
            .failsWithOneLine(1);
    assertTrue(missing.err().contains("nope.log: no such file"), missing.err());
    Path notGzip = dir.resolve("broken.gz");
    Files.write(notGzip, new byte[] {0x1f, (byte) 0x8b, 1, 2, 3});
    Run.of("thresholds", "--period", "5m", notGzip.toString()).failsWithOneLine(1);
    Path empty = write("empty.log", List.of());
    Run none = Run.of("thresholds", "--period", "5m", empty.toString()).failsWithOneLine(1);
    assertTrue(none.err().contains("no requests"), none.err());
    Run.of("frobnicate").failsWithOneLine(2);
  }
}
