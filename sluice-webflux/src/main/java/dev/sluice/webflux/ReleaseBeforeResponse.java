package dev.sluice.webflux;

import dev.sluice.Slots;
import java.nio.file.Path;
import org.reactivestreams.Publisher;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.ZeroCopyHttpOutputMessage;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The response of a request that holds concurrency slots, giving them back before it can be
 * complete at the client, so a client that sends its next request as soon as it has read a response
 * finds its slot free. A body of one value ({@code Mono}) gives them back before that value is
 * written; a body of several before the server sees it complete (it then writes the last chunk), or
 * before the value that completes a declared {@code Content-Length}. A response without a body
 * gives them back in {@link #setComplete}. A file sent zero-copy gives them back only when the
 * filter chain ends, after the file is sent. The release is {@link Slots#release}: once.
 */
class ReleaseBeforeResponse extends ServerHttpResponseDecorator {

  private final Slots held;

  ReleaseBeforeResponse(ServerHttpResponse delegate, Slots held) {
    super(delegate);
    this.held = held;
  }

  /** {@code response} decorated to give {@code held} back before it is complete. */
  static ServerHttpResponse of(ServerHttpResponse response, Slots held) {
    return response instanceof ZeroCopyHttpOutputMessage
        ? new ZeroCopy(response, held)
        : new ReleaseBeforeResponse(response, held);
  }

  @Override
  public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
    if (body instanceof Mono<? extends DataBuffer> one) {
      // Kept a Mono: Reactor Netty writes it with the headers as one full response.
      return super.writeWith(one.doOnEach(signal -> held.release()));
    }
    return super.writeWith(releasing(Flux.from(body), new long[] {declaredLength()}));
  }

  @Override
  public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> body) {
    long[] left = {declaredLength()};
    return super.writeAndFlushWith(
        Flux.from(body).map(part -> releasing(Flux.from(part), left)).doOnComplete(held::release));
  }

  @Override
  public Mono<Void> setComplete() {
    held.release();
    return super.setComplete();
  }

  /**
   * {@code body}, giving the slots back before the value that completes {@code left[0]} bytes (when
   * not negative, what is left of a declared length) and before it completes.
   */
  private <T extends DataBuffer> Flux<T> releasing(Flux<T> body, long[] left) {
    return body.doOnNext(
            buffer -> {
              if (left[0] >= 0) {
                left[0] -= buffer.readableByteCount();
                if (left[0] <= 0) {
                  held.release();
                }
              }
            })
        .doOnComplete(held::release);
  }

  /** The declared {@code Content-Length}, or -1. */
  private long declaredLength() {
    return getHeaders().getContentLength();
  }

  /** On a server that sends files zero-copy, which the decorator keeps. */
  private static final class ZeroCopy extends ReleaseBeforeResponse
      implements ZeroCopyHttpOutputMessage {

    ZeroCopy(ServerHttpResponse delegate, Slots held) {
      super(delegate, held);
    }

    @Override
    public Mono<Void> writeWith(Path file, long position, long count) {
      return ((ZeroCopyHttpOutputMessage) getDelegate()).writeWith(file, position, count);
    }
  }
}
