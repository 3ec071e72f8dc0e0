package dev.sluice.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** Measured figures of the reliability tests: printed, and appended to target/reliability.md. */
final class Report {

  private static final Path FILE = Path.of("target", "reliability.md");

  private Report() {}

  static synchronized void line(String text) {
    System.out.println("[reliability] " + text);
    try {
      Files.createDirectories(FILE.getParent());
      Files.writeString(
          FILE,
          text + System.lineSeparator(),
          StandardCharsets.UTF_8,
          StandardOpenOption.CREATE,
          StandardOpenOption.APPEND);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
