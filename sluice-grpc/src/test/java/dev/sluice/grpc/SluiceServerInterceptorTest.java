package dev.sluice.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Any;
import com.google.rpc.RetryInfo;
import dev.sluice.Algorithm;
import dev.sluice.http.RequestLimiter;
import dev.sluice.http.Rule;
import dev.sluice.http.RuleSet;
import dev.sluice.spi.CounterStore;
import dev.sluice.store.inmemory.InMemoryCounterStore;
import dev.sluice.store.memcached.MemcachedCounterStore;
import dev.sluice.testkit.MemcachedServer;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.blockhound.BlockHound;

/**
 * The interceptor on a real Netty server and client, BlockHound installed on the transport's event
 * loops (the server runs calls there: a direct executor): unary and server-streaming calls limited
 * by method, metadata and peer, refused with RESOURCE_EXHAUSTED and a RetryInfo, and concurrency
 * slots given back when a call closes or is cancelled.
 */
class SluiceServerInterceptorTest {

  static {
    BlockHound.builder()
        .nonBlockingThreadPredicate(p -> p.or(t -> t.getName().startsWith("grpc-nio-worker")))
        // Queuing a memcached operation takes spymemcached's queue lock for a moment, never I/O.
        .allowBlockingCallsInside("net.spy.memcached.MemcachedConnection", "addOperation")
        .allowBlockingCallsInside("net.spy.memcached.protocol.TCPMemcachedNodeImpl", "addOp")
        // The deadline of a memcached call is a task on the store's scheduler: its queue's lock.
        .allowBlockingCallsInside("java.util.concurrent.ScheduledThreadPoolExecutor", "schedule")
        .install();
  }

  static final MethodDescriptor.Marshaller<String> TEXT =
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

  static final MethodDescriptor<String, String> ECHO =
      MethodDescriptor.<String, String>newBuilder(TEXT, TEXT)
          .setType(MethodDescriptor.MethodType.UNARY)
          .setFullMethodName("sluice.test.Echo/Say")
          .build();

  static final MethodDescriptor<String, String> WATCH =
      MethodDescriptor.<String, String>newBuilder(TEXT, TEXT)
          .setType(MethodDescriptor.MethodType.SERVER_STREAMING)
          .setFullMethodName("sluice.test.Echo/Watch")
          .build();

  static final Metadata.Key<String> API_KEY =
      Metadata.Key.of("x-api-key", Metadata.ASCII_STRING_MARSHALLER);

  private Server server;
  private ManagedChannel channel;

  /** The open streams of Watch: each got one message and stays open until completed here. */
  private final List<StreamObserver<String>> watching = new CopyOnWriteArrayList<>();

  @AfterEach
  void stop() throws InterruptedException {
    if (channel != null) {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    if (server != null) {
      server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  private void start(CounterStore store, Rule... rules) throws IOException {
    RuleSet.Builder b = RuleSet.builder();
    for (Rule r : rules) {
      b.rule(r);
    }
    RequestLimiter limiter = RequestLimiter.builder(store).rules(b.build()).build();
    ServerServiceDefinition echo =
        ServerServiceDefinition.builder("sluice.test.Echo")
            .addMethod(
                ECHO,
                ServerCalls.asyncUnaryCall(
                    (String in, StreamObserver<String> out) -> {
                      out.onNext("echo " + in);
                      out.onCompleted();
                    }))
            .addMethod(
                WATCH,
                ServerCalls.asyncServerStreamingCall(
                    (String in, StreamObserver<String> out) -> {
                      out.onNext("watching " + in);
                      watching.add(out);
                    }))
            .build();
    server =
        NettyServerBuilder.forAddress(
                new InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0))
            .directExecutor()
            .addService(ServerInterceptors.intercept(echo, new SluiceServerInterceptor(limiter)))
            .build()
            .start();
    channel = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort()).usePlaintext().build();
  }

  private String say(String key) {
    Metadata h = new Metadata();
    h.put(API_KEY, key);
    return ClientCalls.blockingUnaryCall(
        io.grpc.ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(h)),
        ECHO,
        CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS),
        "hi");
  }

  private static final Rule PER_KEY =
      Rule.builder("per-key")
          .path("/sluice.test.Echo/Say")
          .key("header:x-api-key")
          .algorithm(Algorithm.FIXED_WINDOW)
          .tier(3, Duration.ofMinutes(1))
          .build();

  @Test
  void aUnaryMethodIsLimitedByMetadataAndRefusedWithRetryInfo() throws Exception {
    start(InMemoryCounterStore.create(), PER_KEY);
    assertLimited();
  }

  @Test
  void aUnaryMethodIsLimitedOnMemcachedWithoutBlockingTheEventLoop() throws Exception {
    try (MemcachedServer memcached = MemcachedServer.start();
        MemcachedCounterStore store =
            MemcachedCounterStore.builder()
                .servers(memcached.address())
                .prefix("grpc")
                .operationTimeout(Duration.ofSeconds(1))
                .build()) {
      start(store, PER_KEY);
      assertLimited();
    }
  }

  private void assertLimited() {
    for (int i = 0; i < 3; i++) {
      assertEquals("echo hi", say("k"));
    }
    StatusRuntimeException refused = assertThrows(StatusRuntimeException.class, () -> say("k"));
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, refused.getStatus().getCode());
    assertTrue(refused.getStatus().getDescription().contains("per-key"), refused::toString);
    assertEquals("3", refused.getTrailers().get(key("x-ratelimit-limit")));
    com.google.rpc.Status detail = StatusProto.fromThrowable(refused);
    assertNotNull(detail, "a google.rpc.Status in the trailers");
    RetryInfo retry = null;
    for (Any a : detail.getDetailsList()) {
      if (a.is(RetryInfo.class)) {
        try {
          retry = a.unpack(RetryInfo.class);
        } catch (com.google.protobuf.InvalidProtocolBufferException e) {
          throw new AssertionError(e);
        }
      }
    }
    assertNotNull(retry, "a RetryInfo");
    assertTrue(retry.getRetryDelay().getSeconds() > 0, retry::toString);
    assertEquals("echo hi", say("other"), "another key has its own limit");
  }

  private static Metadata.Key<String> key(String name) {
    return Metadata.Key.of(name, Metadata.ASCII_STRING_MARSHALLER);
  }

  @Test
  void theMethodAndThePeerAddressKeyARule() throws Exception {
    Rule perPeer =
        Rule.builder("per-peer")
            .path("/sluice.test.Echo/*")
            .key("ip")
            .algorithm(Algorithm.FIXED_WINDOW)
            .tier(2, Duration.ofMinutes(1))
            .build();
    start(InMemoryCounterStore.create(), perPeer);
    assertEquals("echo hi", say("a"));
    assertEquals("echo hi", say("b"));
    StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> say("c"));
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode(), "one peer, any key");
  }

  @Test
  void aStreamsSlotIsGivenBackWhenItClosesOrIsCancelled() throws Exception {
    Rule inFlight =
        Rule.builder("in-flight")
            .path("/sluice.test.Echo/Watch")
            .key("header:x-api-key")
            .concurrency(1, Duration.ofMinutes(5))
            .build();
    start(InMemoryCounterStore.create(), inFlight);
    Metadata h = new Metadata();
    h.put(API_KEY, "k");
    var keyed =
        io.grpc.ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(h));

    // Closed by the server: the slot comes back.
    Iterator<String> first =
        ClientCalls.blockingServerStreamingCall(keyed, WATCH, CallOptions.DEFAULT, "a");
    assertEquals("watching a", first.next());
    Iterator<String> second =
        ClientCalls.blockingServerStreamingCall(keyed, WATCH, CallOptions.DEFAULT, "b");
    StatusRuntimeException refused = assertThrows(StatusRuntimeException.class, second::next);
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, refused.getStatus().getCode());
    watching.remove(0).onCompleted();
    assertTrue(!first.hasNext());

    // Cancelled by the client: the slot comes back too.
    ClientCall<String, String> call = keyed.newCall(WATCH, CallOptions.DEFAULT);
    Iterator<String> third = ClientCalls.blockingServerStreamingCall(call, "c");
    assertEquals("watching c", third.next());
    call.cancel("client gone", null);
    boolean freed =
        MemcachedServer.await(
            Duration.ofSeconds(10),
            () -> {
              Iterator<String> again =
                  ClientCalls.blockingServerStreamingCall(keyed, WATCH, CallOptions.DEFAULT, "d");
              try {
                return again.next().equals("watching d");
              } catch (StatusRuntimeException e) {
                return false;
              }
            });
    assertTrue(freed, "the cancelled call's slot was given back");
  }
}
