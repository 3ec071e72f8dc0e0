package dev.sluice.servlet;

import dev.sluice.Slots;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.IOException;
import java.io.PrintWriter;

/**
 * Gives a request's concurrency slots back before its response can be complete at the client, so a
 * client that sends its next request as soon as it has read a response finds its slot free: before
 * the servlet closes the response's stream or writer, before the write that completes a declared
 * {@code Content-Length}, before {@code sendError} or {@code sendRedirect}, before an async
 * request's {@code complete()}, and at the latest when the filter chain returns (before the
 * container completes the response). {@link Slots#release} gives them back once, whichever comes
 * first.
 */
final class ReleaseBeforeResponse {

  private ReleaseBeforeResponse() {}

  /** The request, with its async context giving the slots back before it completes. */
  static final class Request extends HttpServletRequestWrapper {
    private final Slots slots;

    Request(HttpServletRequest request, Slots slots) {
      super(request);
      this.slots = slots;
    }

    @Override
    public AsyncContext startAsync() {
      return new Async(super.startAsync(), slots);
    }

    @Override
    public AsyncContext startAsync(ServletRequest request, ServletResponse response) {
      return new Async(super.startAsync(request, response), slots);
    }

    @Override
    public AsyncContext getAsyncContext() {
      AsyncContext ctx = super.getAsyncContext();
      return ctx instanceof Async ? ctx : new Async(ctx, slots);
    }
  }

  /** An async context whose {@code complete()} gives the slots back first. */
  private record Async(AsyncContext ctx, Slots slots) implements AsyncContext {
    @Override
    public void complete() {
      slots.release();
      ctx.complete();
    }

    @Override
    public ServletRequest getRequest() {
      return ctx.getRequest();
    }

    @Override
    public ServletResponse getResponse() {
      return ctx.getResponse();
    }

    @Override
    public boolean hasOriginalRequestAndResponse() {
      return ctx.hasOriginalRequestAndResponse();
    }

    @Override
    public void dispatch() {
      ctx.dispatch();
    }

    @Override
    public void dispatch(String path) {
      ctx.dispatch(path);
    }

    @Override
    public void dispatch(ServletContext context, String path) {
      ctx.dispatch(context, path);
    }

    @Override
    public void start(Runnable run) {
      ctx.start(run);
    }

    @Override
    public void addListener(AsyncListener listener) {
      ctx.addListener(listener);
    }

    @Override
    public void addListener(
        AsyncListener listener, ServletRequest request, ServletResponse response) {
      ctx.addListener(listener, request, response);
    }

    @Override
    public <T extends AsyncListener> T createListener(Class<T> type) throws ServletException {
      return ctx.createListener(type);
    }

    @Override
    public void setTimeout(long timeout) {
      ctx.setTimeout(timeout);
    }

    @Override
    public long getTimeout() {
      return ctx.getTimeout();
    }
  }

  /** The response, giving the slots back before its last bytes can go out. */
  static final class Response extends HttpServletResponseWrapper {
    private final Slots slots;
    private long length = -1;
    private long written;
    private ServletOutputStream stream;
    private PrintWriter writer;

    Response(HttpServletResponse response, Slots slots) {
      super(response);
      this.slots = slots;
    }

    private void counting(long n) {
      written += n;
      if (length >= 0 && written >= length) {
        slots.release();
      }
    }

    private void length(String name, String value) {
      if ("Content-Length".equalsIgnoreCase(name)) {
        try {
          length = value == null ? -1 : Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
          length = -1;
        }
      }
    }

    @Override
    public void setContentLength(int len) {
      length = len;
      super.setContentLength(len);
    }

    @Override
    public void setContentLengthLong(long len) {
      length = len;
      super.setContentLengthLong(len);
    }

    @Override
    public void setHeader(String name, String value) {
      length(name, value);
      super.setHeader(name, value);
    }

    @Override
    public void addHeader(String name, String value) {
      length(name, value);
      super.addHeader(name, value);
    }

    @Override
    public void setIntHeader(String name, int value) {
      length(name, Integer.toString(value));
      super.setIntHeader(name, value);
    }

    @Override
    public void addIntHeader(String name, int value) {
      length(name, Integer.toString(value));
      super.addIntHeader(name, value);
    }

    @Override
    public void sendError(int sc, String msg) throws IOException {
      slots.release();
      super.sendError(sc, msg);
    }

    @Override
    public void sendError(int sc) throws IOException {
      slots.release();
      super.sendError(sc);
    }

    @Override
    public void sendRedirect(String location) throws IOException {
      slots.release();
      super.sendRedirect(location);
    }

    @Override
    public ServletOutputStream getOutputStream() throws IOException {
      if (stream == null) {
        stream = new Stream(super.getOutputStream());
      }
      return stream;
    }

    @Override
    public PrintWriter getWriter() throws IOException {
      if (writer == null) {
        writer =
            new PrintWriter(super.getWriter()) {
              @Override
              public void close() {
                slots.release();
                super.close();
              }
            };
      }
      return writer;
    }

    /** The response's stream, counting what is written against a declared length. */
    private final class Stream extends ServletOutputStream {
      private final ServletOutputStream out;

      Stream(ServletOutputStream out) {
        this.out = out;
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
        slots.release();
        out.close();
      }

      @Override
      public boolean isReady() {
        return out.isReady();
      }

      @Override
      public void setWriteListener(WriteListener listener) {
        out.setWriteListener(listener);
      }
    }
  }
}
