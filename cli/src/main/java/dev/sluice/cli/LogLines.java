package dev.sluice.cli;

import java.io.IOException;
import java.io.InputStream;

/** Splits a stream into lines without decoding it; a line longer than 1 MiB is cut there. */
final class LogLines {

  private static final int MAX_LINE = 1 << 20;

  interface LineHandler {
    /** Returns false to stop reading. */
    boolean line(byte[] b, int start, int end);
  }

  private final InputStream in;
  private byte[] buf = new byte[1 << 16];

  LogLines(InputStream in) {
    this.in = in;
  }

  void forEach(LineHandler h) throws IOException {
    int start = 0;
    int end = 0;
    int scan = 0;
    while (true) {
      int nl = -1;
      for (int i = scan; i < end; i++) {
        if (buf[i] == '\n') {
          nl = i;
          break;
        }
      }
      if (nl >= 0) {
        if (!h.line(buf, start, nl)) {
          return;
        }
        start = nl + 1;
        scan = start;
        continue;
      }
      if (end - start >= MAX_LINE) {
        // An overlong line: hand over what fits (it will not parse) and skip the rest of it.
        if (!h.line(buf, start, end)) {
          return;
        }
        start = end = scan = 0;
        int c;
        while ((c = in.read()) != -1 && c != '\n') {
          // skip
        }
        if (c == -1) {
          return;
        }
        continue;
      }
      if (start > 0) {
        System.arraycopy(buf, start, buf, 0, end - start);
        end -= start;
        start = 0;
      }
      if (end == buf.length) {
        buf = java.util.Arrays.copyOf(buf, Math.min(buf.length * 2, MAX_LINE + 1));
      }
      scan = end;
      int n = in.read(buf, end, buf.length - end);
      if (n < 0) {
        if (end > start) {
          h.line(buf, start, end);
        }
        return;
      }
      end += n;
    }
  }
}
