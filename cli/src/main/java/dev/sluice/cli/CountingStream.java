package dev.sluice.cli;

import java.io.IOException;
import java.io.InputStream;
import java.util.function.LongConsumer;

/** Counts the bytes read through it. */
final class CountingStream extends java.io.FilterInputStream {
  private final LongConsumer progress;
  private long count;

  CountingStream(InputStream in, LongConsumer progress) {
    super(in);
    this.progress = progress;
  }

  @Override
  public int read() throws IOException {
    int c = super.read();
    if (c >= 0) {
      progress.accept(++count);
    }
    return c;
  }

  @Override
  public int read(byte[] b, int off, int len) throws IOException {
    int n = super.read(b, off, len);
    if (n > 0) {
      count += n;
      progress.accept(count);
    }
    return n;
  }
}
