package dev.sluice.jaxrs;

import jakarta.ws.rs.core.MultivaluedMap;
import jakarta.ws.rs.ext.WriterInterceptor;
import jakarta.ws.rs.ext.WriterInterceptorContext;
import java.io.IOException;
import java.io.OutputStream;
import java.util.List;

/**
 * Gives a request's concurrency slots back before its response can reach the client, so a client
 * that sends its next request as soon as it has read a response finds its slot free: when the
 * entity is written, before the stream is closed (which sends the last bytes), or before the write
 * that completes a declared {@code Content-Length}. A response without an entity gives them back in
 * {@link SluiceResponseFilter}. Outermost of the writer interceptors, so an encoder's last bytes
 * come after the release too. A {@code ChunkedOutput} (and so an SSE stream) is left to Jersey's
 * FINISHED event.
 */
final class ReleaseBeforeResponse implements WriterInterceptor {

  @Override
  public void aroundWriteTo(WriterInterceptorContext ctx) throws IOException {
    Object held = ctx.getProperty(SlotRelease.SLOTS);
    if (!(held instanceof List<?> list)
        || list.isEmpty()
        || ctx.getEntity() instanceof org.glassfish.jersey.server.ChunkedOutput) {
      // A chunked response (SSE included) is written here once, and its chunks later without the
      // interceptors: its slots are left to Jersey's FINISHED event, not given back now.
      ctx.proceed();
      return;
    }
    ctx.setOutputStream(
        new Releasing(ctx.getOutputStream(), held, contentLength(ctx.getHeaders())));
    try {
      ctx.proceed();
    } finally {
      SlotRelease.release(held);
    }
  }

  /** The declared {@code Content-Length}, or -1. */
  private static long contentLength(MultivaluedMap<String, Object> headers) {
    for (var e : headers.entrySet()) {
      if ("Content-Length".equalsIgnoreCase(e.getKey()) && !e.getValue().isEmpty()) {
        try {
          return Long.parseLong(String.valueOf(e.getValue().get(0)).trim());
        } catch (NumberFormatException ignored) {
          return -1;
        }
      }
    }
    return -1;
  }

  /** The entity stream, giving the slots back before its last bytes can go out. */
  private static final class Releasing extends OutputStream {
    private final OutputStream out;
    private final Object held;
    private final long length;
    private long written;

    Releasing(OutputStream out, Object held, long length) {
      this.out = out;
      this.held = held;
      this.length = length;
    }

    private void counting(long n) {
      written += n;
      if (length >= 0 && written >= length) {
        SlotRelease.release(held);
      }
    }

    @Override
    public void write(int b) throws IOException {
      counting(1);
      out.write(b);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      counting(len);
      out.write(b, off, len);
    }

    @Override
    public void flush() throws IOException {
      out.flush();
    }

    @Override
    public void close() throws IOException {
      SlotRelease.release(held);
      out.close();
    }
  }
}
