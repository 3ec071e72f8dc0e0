package dev.sluice.grpc;

import dev.sluice.http.RequestLimiter;
import dev.sluice.spi.CounterStore;
import dev.sluice.store.inmemory.InMemoryCounterStore;
import dev.sluice.store.memcached.MemcachedCounterStore;
import dev.sluice.yaml.YamlRules;
import io.grpc.CallOptions;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The gRPC server and client {@code docs/bench/reactive.sh} measures: a unary echo on Netty (the
 * transport's event loops run the calls), with the {@link SluiceServerInterceptor} in front or not,
 * and a client that keeps a number of calls in flight, 1,000 API keys in turn in the metadata.
 *
 * <pre>
 * java -cp CLASSPATH dev.sluice.grpc.Bench server PORT off|sluice [RULES [MEMCACHED host:port]]
 * java -cp CLASSPATH dev.sluice.grpc.Bench client PORT SECONDS IN_FLIGHT
 * </pre>
 *
 * The server runs until killed; the client prints the calls that succeeded, and those that failed.
 */
final class Bench {

  private Bench() {}

  private static final MethodDescriptor.Marshaller<String> TEXT =
      new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(String value) {
          return new ByteArrayInputStream(value.getBytes(StandardCharsets.UTF_8));
        }

        @Override
        public String parse(InputStream stream) {
          try {
            return new String(stream.readAllBytes(), StandardCharsets.UTF_8);
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        }
      };

  /** The test's echo, without the test class (which installs BlockHound, measured too). */
  private static final MethodDescriptor<String, String> ECHO =
      MethodDescriptor.<String, String>newBuilder(TEXT, TEXT)
          .setType(MethodDescriptor.MethodType.UNARY)
          .setFullMethodName("sluice.test.Echo/Say")
          .build();

  private static final Metadata.Key<String> API_KEY =
      Metadata.Key.of("x-api-key", Metadata.ASCII_STRING_MARSHALLER);

  public static void main(String[] args) throws Exception {
    if (args[0].equals("server")) {
      server(args);
    } else {
      client(args);
    }
  }

  private static void server(String[] args) throws Exception {
    int port = Integer.parseInt(args[1]);
    ServerServiceDefinition echo =
        ServerServiceDefinition.builder("sluice.test.Echo")
            .addMethod(
                ECHO,
                ServerCalls.asyncUnaryCall(
                    (String in, StreamObserver<String> out) -> {
                      out.onNext("echo " + in);
                      out.onCompleted();
                    }))
            .build();
    if (args[2].equals("sluice")) {
      CounterStore store =
          args.length > 4
              ? MemcachedCounterStore.builder()
                  .servers(args[4])
                  .operationTimeout(Duration.ofMillis(200))
                  .build()
              : InMemoryCounterStore.create();
      RequestLimiter limiter =
          RequestLimiter.builder(store).rules(YamlRules.load(Path.of(args[3]))).build();
      echo = ServerInterceptors.intercept(echo, new SluiceServerInterceptor(limiter));
    }
    NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), port))
        .directExecutor()
        .addService(echo)
        .build()
        .start();
    System.out.println("listening on " + port);
    new CountDownLatch(1).await();
  }

  private static void client(String[] args) throws Exception {
    int port = Integer.parseInt(args[1]);
    long seconds = Long.parseLong(args[2]);
    int inFlight = Integer.parseInt(args[3]);
    ManagedChannel channel =
        NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().directExecutor().build();
    var keyed = new io.grpc.Channel[1000];
    for (int i = 0; i < keyed.length; i++) {
      Metadata h = new Metadata();
      h.put(API_KEY, "key-" + i);
      keyed[i] =
          ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(h));
    }
    AtomicLong ok = new AtomicLong();
    AtomicLong failed = new AtomicLong();
    AtomicLong next = new AtomicLong();
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    CountDownLatch done = new CountDownLatch(inFlight);
    for (int i = 0; i < inFlight; i++) {
      new Runner(keyed, next, ok, failed, end, done).call();
    }
    done.await();
    System.out.printf(Locale.ROOT, "%d ok %d failed%n", ok.get(), failed.get());
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }

  /** One call in flight at a time, the next started as the last one answers, until {@code end}. */
  private static final class Runner implements StreamObserver<String> {
    private final io.grpc.Channel[] keyed;
    private final AtomicLong next;
    private final AtomicLong ok;
    private final AtomicLong failed;
    private final long end;
    private final CountDownLatch done;

    Runner(
        io.grpc.Channel[] keyed,
        AtomicLong next,
        AtomicLong ok,
        AtomicLong failed,
        long end,
        CountDownLatch done) {
      this.keyed = keyed;
      this.next = next;
      this.ok = ok;
      this.failed = failed;
      this.end = end;
      this.done = done;
    }

    void call() {
      if (System.nanoTime() >= end) {
        done.countDown();
        return;
      }
      io.grpc.Channel c = keyed[(int) (next.getAndIncrement() % keyed.length)];
      ClientCalls.asyncUnaryCall(c.newCall(ECHO, CallOptions.DEFAULT), "hi", this);
    }

    @Override
    public void onNext(String value) {}

    @Override
    public void onError(Throwable t) {
      failed.incrementAndGet();
      call();
    }

    @Override
    public void onCompleted() {
      ok.incrementAndGet();
      call();
    }
  }
}
