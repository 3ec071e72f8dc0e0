package dev.sluice.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;

/**
 * What a server spent per request, from a JFR recording of it under load: execution samples per
 * 1,000 requests served, in all and with a frame of each named class or method on the stack. Two
 * recordings of the same server under the same load, one per mode, then compare in cost per request
 * rather than in throughput, which a noisy machine moves by more than the difference.
 *
 * <pre>
 * java -cp jmh/target/benchmarks.jar dev.sluice.bench.ProfileShare FILE.jfr REQUESTS [PATTERN...]
 * </pre>
 *
 * A pattern is part of a frame's {@code class.method} name; {@code dev.sluice.} by default.
 */
public final class ProfileShare {

  private ProfileShare() {}

  public static void main(String[] args) throws IOException {
    if (args.length < 2) {
      System.err.println("usage: ProfileShare FILE.jfr REQUESTS [PATTERN...]");
      System.exit(2);
    }
    long requests = Long.parseLong(args[1]);
    Map<String, Integer> hits = new LinkedHashMap<>();
    for (int i = 2; i < args.length; i++) {
      hits.put(args[i], 0);
    }
    if (hits.isEmpty()) {
      hits.put("dev.sluice.", 0);
    }
    int samples = 0;
    try (RecordingFile file = new RecordingFile(Path.of(args[0]))) {
      while (file.hasMoreEvents()) {
        RecordedEvent e = file.readEvent();
        if (!e.getEventType().getName().equals("jdk.ExecutionSample")
            || e.getStackTrace() == null) {
          continue;
        }
        samples++;
        for (Map.Entry<String, Integer> h : hits.entrySet()) {
          for (RecordedFrame f : e.getStackTrace().getFrames()) {
            if ((f.getMethod().getType().getName() + "." + f.getMethod().getName())
                .contains(h.getKey())) {
              h.setValue(h.getValue() + 1);
              break;
            }
          }
        }
      }
    }
    System.out.printf(
        "%s: %d samples, %.2f per 1,000 requests%n", args[0], samples, 1000.0 * samples / requests);
    for (Map.Entry<String, Integer> h : hits.entrySet()) {
      System.out.printf(
          "  %-40s %6d samples, %.2f per 1,000 requests%n",
          h.getKey(), h.getValue(), 1000.0 * h.getValue() / requests);
    }
  }
}
