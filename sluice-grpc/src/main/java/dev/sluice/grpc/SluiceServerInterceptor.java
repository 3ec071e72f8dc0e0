package dev.sluice.grpc;

import com.google.protobuf.Any;
import com.google.protobuf.Duration;
import com.google.rpc.Code;
import com.google.rpc.RetryInfo;
import dev.sluice.Slots;
import dev.sluice.http.Admission;
import dev.sluice.http.RequestInfo;
import dev.sluice.http.RequestLimiter;
import io.grpc.Context;
import io.grpc.ForwardingServerCall;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.protobuf.StatusProto;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Rate limiting for a gRPC server, by the same rules as the HTTP adapters: a call is a {@code POST}
 * of its full method name as the path ({@code /package.Service/Method}, so {@code match: { path:
 * "/package.Service/*" }} takes every method of a service), its metadata as headers ({@code
 * header:NAME} keys; a binary entry, {@code header:NAME-bin}, as its bytes in unpadded Base64), the
 * peer's address as the client's ({@code ip}; a {@code x-forwarded-for} or {@code forwarded} entry
 * counts only from the rules' trusted proxies), and, when given a {@link Context.Key}, the value an
 * authenticating interceptor put there as the user ({@code user}). The decision never blocks the
 * transport's threads ({@link RequestLimiter#decideAsync}); the call starts once it is allowed.
 *
 * <p>An allowed call sends the rate-limit headers as response metadata ({@code x-ratelimit-*},
 * {@code ratelimit-policy}, {@code ratelimit}). A refused one is closed with {@code
 * RESOURCE_EXHAUSTED} (a rate or concurrency limit) or {@code UNAVAILABLE} (load shedding), the
 * problem as its description, the headers as trailers, and a {@code google.rpc.Status} carrying a
 * {@code google.rpc.RetryInfo} with the delay before a retry can pass. A call's concurrency slots
 * are given back when it closes, completes or is cancelled. A call whose handler throws is closed
 * with {@code UNKNOWN}, as gRPC closes it without the interceptor. Thread-safe.
 */
public final class SluiceServerInterceptor implements ServerInterceptor {

  private static final Logger LOG = LoggerFactory.getLogger(SluiceServerInterceptor.class);

  /** A binary metadata value's text, as gRPC writes it on the wire. */
  private static final Base64.Encoder BASE64 = Base64.getEncoder().withoutPadding();

  private final RequestLimiter limiter;
  private final Context.Key<?> user;

  /** Limits by method, metadata and peer; no call has a user. */
  public SluiceServerInterceptor(RequestLimiter limiter) {
    this(limiter, null);
  }

  /**
   * Limits by method, metadata and peer, and by the user an authenticating interceptor put in the
   * call's {@link Context} under {@code user} (its {@code toString()}): install this interceptor
   * inside that one, so the context is current when the call arrives here. A call with nothing
   * under the key has no user, and a rule keyed by {@code user} alone does not apply to it.
   */
  public SluiceServerInterceptor(RequestLimiter limiter, Context.Key<?> user) {
    this.limiter = Objects.requireNonNull(limiter, "limiter");
    this.user = user;
  }

  /** {@return the limiter: its kill switch, rule switches and {@code update}} */
  public RequestLimiter limiter() {
    return limiter;
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    Object u = user == null ? null : user.get();
    Call<Q, R> c = new Call<>(call, headers, next, u == null ? null : u.toString());
    Admission.decideAsync(limiter, c).whenComplete((a, e) -> c.inOrder(() -> c.decided(a)));
    return c;
  }

  /**
   * One call: what the rules see of it, its response metadata, and the listener that holds its
   * events until the decision starts it (none but readiness and cancellation come before: the
   * transport delivers no message until the handler asks for one).
   */
  private static final class Call<Q, R> extends ServerCall.Listener<Q> implements RequestInfo {
    final Serial serial = new Serial();
    private final ServerCall<Q, R> call;
    private final Metadata requestHeaders;
    private final ServerCallHandler<Q, R> next;
    private final String user;
    private final Metadata limitHeaders = new Metadata();
    private volatile Slots slots = Slots.NONE;
    private ServerCall.Listener<Q> delegate;
    private boolean cancelled;

    /** Whether {@link #failed} closed the call: the handler hears nothing more but its end. */
    private boolean closed;

    Call(
        ServerCall<Q, R> call, Metadata requestHeaders, ServerCallHandler<Q, R> next, String user) {
      this.call = call;
      this.requestHeaders = requestHeaders;
      this.next = next;
      this.user = user;
    }

    /**
     * After the decision, in {@link #serial}: the rate-limit headers kept for the response, then
     * the call started, or closed refused. A call the decision did not reach (never: it completes
     * with an admission) starts unlimited.
     */
    void decided(Admission a) {
      if (a != null) {
        slots = a.slots();
      }
      if (cancelled) {
        slots.release();
        return;
      }
      if (a != null) {
        a.writeHeaders(this::limitHeader);
        if (a.refused()) {
          call.close(refusal(a), limitHeaders);
          return;
        }
      }
      delegate = next.startCall(new Responding(), requestHeaders);
      if (call.isReady()) {
        delegate.onReady();
      }
    }

    private Status refusal(Admission a) {
      boolean unavailable = a.status() == 503;
      String problem = a.problem();
      Status s = unavailable ? Status.UNAVAILABLE : Status.RESOURCE_EXHAUSTED;
      long millis = Math.max(0, a.retryAfterMillis());
      com.google.rpc.Status detail =
          com.google.rpc.Status.newBuilder()
              .setCode(unavailable ? Code.UNAVAILABLE_VALUE : Code.RESOURCE_EXHAUSTED_VALUE)
              .setMessage(problem)
              .addDetails(
                  Any.pack(
                      RetryInfo.newBuilder()
                          .setRetryDelay(
                              Duration.newBuilder()
                                  .setSeconds(millis / 1000)
                                  .setNanos((int) (millis % 1000) * 1_000_000))
                          .build()))
              .build();
      Metadata trailers = StatusProto.toStatusRuntimeException(detail).getTrailers();
      if (trailers != null) {
        limitHeaders.merge(trailers);
      }
      return s.withDescription(problem);
    }

    /** The call as the handler sees it: the rate-limit headers sent, the slots given back. */
    private final class Responding extends ForwardingServerCall.SimpleForwardingServerCall<Q, R> {
      Responding() {
        super(call);
      }

      @Override
      public void sendHeaders(Metadata headers) {
        headers.merge(limitHeaders);
        super.sendHeaders(headers);
      }

      @Override
      public void close(Status status, Metadata trailers) {
        slots.release();
        super.close(status, trailers);
      }
    }

    /**
     * Runs {@code event} in {@link #serial}, after the events before it. What the application
     * throws there (its handler's start, or its listener) closes the call with {@code UNKNOWN}, as
     * gRPC closes a call whose listener throws: gRPC does not see it when the event runs in the
     * store's thread, and the client would otherwise wait for its deadline.
     */
    void inOrder(Runnable event) {
      serial.execute(
          () -> {
            try {
              event.run();
            } catch (RuntimeException | Error e) {
              failed(e);
            }
          });
    }

    private void failed(Throwable e) {
      LOG.warn("a gRPC call failed in the application; closing it with UNKNOWN", e);
      closed = true;
      slots.release();
      try {
        call.close(
            Status.UNKNOWN.withDescription("Application error processing RPC").withCause(e),
            new Metadata());
      } catch (RuntimeException closedAlready) {
        LOG.debug("the call was closed already", closedAlready);
      }
    }

    // The listener: the call's events, in the order they came, once it has started.

    @Override
    public void onMessage(Q message) {
      inOrder(
          () -> {
            if (!closed) {
              delegate.onMessage(message);
            }
          });
    }

    @Override
    public void onHalfClose() {
      inOrder(
          () -> {
            if (!closed) {
              delegate.onHalfClose();
            }
          });
    }

    @Override
    public void onCancel() {
      inOrder(
          () -> {
            cancelled = true;
            slots.release();
            if (delegate != null) {
              delegate.onCancel();
            }
          });
    }

    @Override
    public void onComplete() {
      inOrder(
          () -> {
            slots.release();
            if (delegate != null) {
              delegate.onComplete();
            }
          });
    }

    @Override
    public void onReady() {
      inOrder(
          () -> {
            if (delegate != null && !closed) {
              delegate.onReady();
            }
          });
    }

    /** One rate-limit header, kept for the response's metadata. */
    private void limitHeader(String name, String value) {
      limitHeaders.put(
          Metadata.Key.of(name.toLowerCase(Locale.ROOT), Metadata.ASCII_STRING_MARSHALLER), value);
    }

    // The request, as the rules see it.

    @Override
    public String method() {
      return "POST";
    }

    @Override
    public String path() {
      return "/" + call.getMethodDescriptor().getFullMethodName();
    }

    /**
     * Every value of an entry of the metadata. A binary entry's (a name ending in {@code -bin}) is
     * its bytes in unpadded Base64 (RFC 4648's alphabet, with {@code +} and {@code /}), as gRPC
     * sends them on the wire. A name that metadata cannot hold (a pseudo-header such as {@code
     * :authority}, a space) has none.
     */
    @Override
    public List<String> headers(String name) {
      String key = name.toLowerCase(Locale.ROOT);
      if (key.startsWith(":")) {
        return List.of();
      }
      List<String> out = new ArrayList<>(1);
      try {
        if (key.endsWith(Metadata.BINARY_HEADER_SUFFIX)) {
          Iterable<byte[]> values =
              requestHeaders.getAll(Metadata.Key.of(key, Metadata.BINARY_BYTE_MARSHALLER));
          if (values != null) {
            values.forEach(v -> out.add(BASE64.encodeToString(v)));
          }
        } else {
          Iterable<String> values =
              requestHeaders.getAll(Metadata.Key.of(key, Metadata.ASCII_STRING_MARSHALLER));
          if (values != null) {
            values.forEach(out::add);
          }
        }
      } catch (IllegalArgumentException notAMetadataName) {
        return List.of();
      }
      return out;
    }

    @Override
    public Optional<String> remoteAddress() {
      SocketAddress peer = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
      if (!(peer instanceof InetSocketAddress inet)) {
        return Optional.empty();
      }
      return Optional.of(
          inet.getAddress() != null ? inet.getAddress().getHostAddress() : inet.getHostString());
    }

    @Override
    public Optional<String> principal() {
      return Optional.ofNullable(user);
    }

    @Override
    public Optional<Object> attribute(String name) {
      return Optional.empty();
    }
  }
}
