package dev.sluice.cli;

import java.io.PrintWriter;
import java.io.StringWriter;

/** Runs the command in-process and keeps what it printed. */
record Run(int code, String out, String err) {

  static Run of(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = Sluice.run(new PrintWriter(out), new PrintWriter(err), args);
    return new Run(code, out.toString(), err.toString());
  }

  /** Bad input: a non-zero exit and exactly one line on standard error, no stack trace. */
  Run failsWithOneLine(int expectedCode) {
    org.junit.jupiter.api.Assertions.assertEquals(expectedCode, code, () -> out + err);
    org.junit.jupiter.api.Assertions.assertEquals(1, err.strip().lines().count(), err);
    org.junit.jupiter.api.Assertions.assertTrue(err.startsWith("sluice: "), err);
    org.junit.jupiter.api.Assertions.assertFalse(err.contains("\tat "), err);
    return this;
  }
}
