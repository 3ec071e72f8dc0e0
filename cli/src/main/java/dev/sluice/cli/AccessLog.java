package dev.sluice.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.OptionalLong;
import java.util.function.LongConsumer;
import java.util.zip.GZIPInputStream;

/**
 * Reads access logs line by line and hands each request's time and client to a {@link Sink}.
 *
 * <p>Formats: Common and Combined Log Format (nginx's and Apache's defaults: {@code host ident user
 * [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 200 ...}), and JSON lines with configurable field
 * names. Files may be gzip-compressed (recognised by their first bytes, not their name). A line
 * that cannot be read is counted, and the first one is remembered for the report; it never stops
 * the run.
 *
 * <p>The client is {@code user=NAME} when the line names an authenticated user ({@code -} means
 * none), else {@code ip=ADDRESS}; {@link Key} can pin either.
 */
final class AccessLog {

  enum Format {
    AUTO,
    CLF,
    JSON
  }

  /** Which field identifies the client. */
  enum Key {
    AUTO,
    USER,
    IP
  }

  /** Names of the JSON fields holding the time, the user and the address. */
  record JsonFields(String time, String user, String ip) {}

  interface Sink {
    void request(long epochMillis, String client);
  }

  private static final JsonFactory JSON = new JsonFactory();

  private final Format format;
  private final Key key;
  private final JsonFields fields;

  long lines;
  long textBytes;
  long malformed;
  long withoutKey;
  String firstMalformed;

  // The fields of the line being read; valid after a successful parse.
  private long time;
  private String user;
  private String ip;
  private String why;

  AccessLog(Format format, Key key, JsonFields fields) {
    this.format = format;
    this.key = key;
    this.fields = fields;
  }

  /** Opens a log's bytes as on disk; an unreadable file is one clear error. */
  private static InputStream raw(Path file) throws IOException {
    try {
      return Files.newInputStream(file);
    } catch (NoSuchFileException e) {
      throw new IOException(file + ": no such file", e);
    } catch (IOException e) {
      throw new IOException(file + ": cannot read (" + e.getMessage() + ")", e);
    }
  }

  /** The log's text: decompressed when its first bytes say gzip. */
  private static InputStream decoded(InputStream raw) throws IOException {
    InputStream in = new BufferedInputStream(raw, 1 << 16);
    in.mark(2);
    int b0 = in.read();
    int b1 = in.read();
    in.reset();
    return b0 == 0x1f && b1 == 0x8b ? new GZIPInputStream(in, 1 << 16) : in;
  }

  /** The time of the file's first readable line, to read files in the order they were written. */
  OptionalLong firstTime(Path file) throws IOException {
    long[] first = {Long.MIN_VALUE};
    try (InputStream in = decoded(raw(file))) {
      new LogLines(in)
          .forEach(
              (b, s, e) -> {
                if (parse(b, s, e)) {
                  first[0] = time;
                  return false;
                }
                return true;
              });
    } catch (java.util.zip.ZipException e) {
      throw notGzip(file, e);
    }
    return first[0] == Long.MIN_VALUE ? OptionalLong.empty() : OptionalLong.of(first[0]);
  }

  /**
   * Reads every line of {@code file} into {@code sink}; {@code rawBytes} hears how many bytes of
   * the file (compressed, as on disk) have been read so far, for progress.
   */
  void read(Path file, Sink sink, LongConsumer rawBytes) throws IOException {
    try (InputStream in = decoded(new CountingStream(raw(file), rawBytes))) {
      long[] lineNo = {0};
      new LogLines(in)
          .forEach(
              (b, s, e) -> {
                lineNo[0]++;
                textBytes += e - s + 1;
                if (e == s) {
                  return true;
                }
                lines++;
                if (!parse(b, s, e)) {
                  malformed(file, lineNo[0]);
                  return true;
                }
                String client = client();
                if (client == null) {
                  withoutKey++;
                } else {
                  sink.request(time, client);
                }
                return true;
              });
    } catch (java.util.zip.ZipException e) {
      throw notGzip(file, e);
    }
  }

  private static IOException notGzip(Path file, java.util.zip.ZipException e) {
    return new IOException(file + ": not a readable gzip file (" + e.getMessage() + ")", e);
  }

  private void malformed(Path file, long lineNo) {
    if (malformed++ == 0) {
      firstMalformed = file.getFileName() + ":" + lineNo + ": " + why;
    }
  }

  private String client() {
    boolean hasUser = user != null && !user.isEmpty() && !user.equals("-");
    boolean hasIp = ip != null && !ip.isEmpty() && !ip.equals("-");
    return switch (key) {
      case USER -> hasUser ? "user=" + user : null;
      case IP -> hasIp ? "ip=" + ip : null;
      case AUTO -> hasUser ? "user=" + user : hasIp ? "ip=" + ip : null;
    };
  }

  /** Parses one line (without its line break) into {@link #time}, {@link #user}, {@link #ip}. */
  boolean parse(byte[] b, int start, int end) {
    while (start < end && (b[start] == ' ' || b[start] == '\t')) {
      start++;
    }
    if (end > start && b[end - 1] == '\r') {
      end--;
    }
    boolean json =
        format == Format.JSON || (format == Format.AUTO && start < end && b[start] == '{');
    return json ? parseJson(b, start, end) : parseClf(b, start, end);
  }

  private boolean parseClf(byte[] b, int start, int end) {
    int hostEnd = indexOf(b, start, end, (byte) ' ');
    int identEnd = hostEnd < 0 ? -1 : indexOf(b, hostEnd + 1, end, (byte) ' ');
    int userEnd = identEnd < 0 ? -1 : indexOf(b, identEnd + 1, end, (byte) ' ');
    if (userEnd < 0 || hostEnd == start) {
      why = "not in Common Log Format (host ident user [time] ...)";
      return false;
    }
    int t = userEnd + 1;
    if (t + 28 > end || b[t] != '[' || b[t + 27] != ']') {
      why = "no [dd/Mon/yyyy:HH:mm:ss +zzzz] time after the user field";
      return false;
    }
    long ms = clfTime(b, t + 1);
    if (ms == Long.MIN_VALUE) {
      why = "bad time " + new String(b, t, 28, StandardCharsets.ISO_8859_1);
      return false;
    }
    time = ms;
    ip = new String(b, start, hostEnd - start, StandardCharsets.ISO_8859_1);
    user = new String(b, identEnd + 1, userEnd - identEnd - 1, StandardCharsets.ISO_8859_1);
    return true;
  }

  private boolean parseJson(byte[] b, int start, int end) {
    time = Long.MIN_VALUE;
    user = null;
    ip = null;
    try (JsonParser p = JSON.createParser(b, start, end - start)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        why = "not a JSON object";
        return false;
      }
      JsonToken t;
      while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
        String name = p.currentName();
        JsonToken v = p.nextToken();
        if (name.equals(fields.time())) {
          time = jsonTime(p, v);
          if (time == Long.MIN_VALUE) {
            why = "field \"" + name + "\" is not a time: " + p.getText();
            return false;
          }
        } else if (name.equals(fields.user())) {
          user = v == JsonToken.VALUE_NULL ? null : p.getValueAsString();
        } else if (name.equals(fields.ip())) {
          ip = v == JsonToken.VALUE_NULL ? null : p.getValueAsString();
        } else {
          p.skipChildren();
        }
      }
      if (t != JsonToken.END_OBJECT) {
        why = "not a JSON object";
        return false;
      }
    } catch (IOException e) {
      why = "bad JSON";
      return false;
    }
    if (time == Long.MIN_VALUE) {
      why = "no \"" + fields.time() + "\" field";
      return false;
    }
    return true;
  }

  private static long jsonTime(JsonParser p, JsonToken v) throws IOException {
    if (v == JsonToken.VALUE_NUMBER_INT || v == JsonToken.VALUE_NUMBER_FLOAT) {
      double n = p.getDoubleValue();
      // Seconds since the epoch, or milliseconds when it is too large to be seconds.
      return n >= 1e11 ? (long) n : (long) Math.floor(n * 1000);
    }
    if (v != JsonToken.VALUE_STRING) {
      return Long.MIN_VALUE;
    }
    String s = p.getText();
    if (s.length() == 26 && s.charAt(2) == '/') {
      byte[] bytes = s.getBytes(StandardCharsets.ISO_8859_1);
      return clfTime(bytes, 0);
    }
    try {
      return OffsetDateTime.parse(s).toInstant().toEpochMilli();
    } catch (DateTimeParseException e) {
      return Long.MIN_VALUE;
    }
  }

  private static final String MONTHS = "JanFebMarAprMayJunJulAugSepOctNovDec";

  /** {@code dd/Mon/yyyy:HH:mm:ss +zzzz} at {@code p} as epoch millis, or Long.MIN_VALUE. */
  static long clfTime(byte[] b, int p) {
    if (b[p + 2] != '/' || b[p + 6] != '/' || b[p + 11] != ':' || b[p + 14] != ':') {
      return Long.MIN_VALUE;
    }
    if (b[p + 17] != ':' || b[p + 20] != ' ' || (b[p + 21] != '+' && b[p + 21] != '-')) {
      return Long.MIN_VALUE;
    }
    int day = digits(b, p, 2);
    int month = -1;
    for (int m = 0; m < 12; m++) {
      if (b[p + 3] == MONTHS.charAt(3 * m)
          && b[p + 4] == MONTHS.charAt(3 * m + 1)
          && b[p + 5] == MONTHS.charAt(3 * m + 2)) {
        month = m + 1;
        break;
      }
    }
    int year = digits(b, p + 7, 4);
    int hour = digits(b, p + 12, 2);
    int minute = digits(b, p + 15, 2);
    int second = digits(b, p + 18, 2);
    int zh = digits(b, p + 22, 2);
    int zm = digits(b, p + 24, 2);
    if (day < 1 || month < 0 || year < 0 || hour < 0 || hour > 23 || minute < 0 || minute > 59) {
      return Long.MIN_VALUE;
    }
    if (second < 0 || second > 60 || zh < 0 || zm < 0 || day > daysIn(year, month)) {
      return Long.MIN_VALUE;
    }
    long offset = (zh * 60L + zm) * 60 * (b[p + 21] == '-' ? -1 : 1);
    long secs = daysFromCivil(year, month, day) * 86_400 + hour * 3600L + minute * 60L + second;
    return (secs - offset) * 1000;
  }

  private static int digits(byte[] b, int p, int n) {
    int v = 0;
    for (int i = 0; i < n; i++) {
      int d = b[p + i] - '0';
      if (d < 0 || d > 9) {
        return -1;
      }
      v = v * 10 + d;
    }
    return v;
  }

  private static int daysIn(int year, int month) {
    return switch (month) {
      case 2 -> (year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)) ? 29 : 28;
      case 4, 6, 9, 11 -> 30;
      default -> 31;
    };
  }

  /** Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil). */
  static long daysFromCivil(int year, int month, int day) {
    long y = month <= 2 ? year - 1 : year;
    long era = Math.floorDiv(y, 400);
    long yoe = y - era * 400;
    long doy = (153L * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
    long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146_097 + doe - 719_468;
  }

  private static int indexOf(byte[] b, int from, int end, byte c) {
    for (int i = from; i < end; i++) {
      if (b[i] == c) {
        return i;
      }
    }
    return -1;
  }
}
