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
import dev.sluice.testkit.NonBlocking;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptors;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
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

/**
 * The interceptor on a real Netty server and client, BlockHound installed on the transport's event
 * loops (the server runs calls there: a direct executor): unary and server-streaming calls limited
 * by method, metadata and peer, refused with RESOURCE_EXHAUSTED and a RetryInfo, and concurrency
 * slots given back when a call closes or is cancelled.
 */
class SluiceServerInterceptorTest {

  static {
    NonBlocking.forbidOn("grpc-nio-worker");
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
    start(new SluiceServerInterceptor(RequestLimiter.builder(store).rules(b.build()).build()));
  }

  private void start(ServerInterceptor... interceptors) throws IOException {
    ServerServiceDefinition echo =
        ServerServiceDefinition.builder("sluice.test.Echo")
            .addMethod(
                ECHO,
                ServerCalls.asyncUnaryCall(
                    (String in, StreamObserver<String> out) -> {
                      if (in.equals("fail")) {
                        throw new IllegalStateException("the handler failed");
                      }
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
            .addService(ServerInterceptors.intercept(echo, interceptors))
            .build()
            .start();
    channel = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort()).usePlaintext().build();
  }

  private String say(String key) {
    Metadata h = new Metadata();
    h.put(API_KEY, key);
    return say(h);
  }

  private String say(Metadata h) {
    return ClientCalls.blockingUnaryCall(
        ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(h)),
        ECHO,
        CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS),
        "hi");
  }

  /**
   * A handler that throws: the call is closed with UNKNOWN, as gRPC closes it without an
   * interceptor, and its concurrency slot is given back. The handler runs in the serial executor
   * that orders a call's events, where gRPC's own handling does not see what it throws.
   */
  @Test
  void aHandlerThatThrowsClosesTheCallAndGivesItsSlotBack() throws Exception {
    Rule one =
        Rule.builder("one")
            .path("/sluice.test.Echo/Say")
            .key("header:x-api-key")
            .concurrency(1, Duration.ofMinutes(1))
            .build();
    start(InMemoryCounterStore.create(), one);
    Metadata h = new Metadata();
    h.put(API_KEY, "k");
    for (int i = 0; i < 3; i++) {
      StatusRuntimeException failed =
          assertThrows(
              StatusRuntimeException.class,
              () ->
                  ClientCalls.blockingUnaryCall(
                      ClientInterceptors.intercept(
                          channel, MetadataUtils.newAttachHeadersInterceptor(h)),
                      ECHO,
                      CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.SECONDS),
                      "fail"));
      assertEquals(Status.Code.UNKNOWN, failed.getStatus().getCode(), failed::toString);
    }
    assertEquals("echo hi", say("k"), "the failed calls' slots were given back");
  }

  private static final Rule PER_KEY =
      Rule.builder("per-key")
          .path("/sluice.test.Echo/Say")
          .key("header:x-api-key")
          .algorithm(Algorithm.TOKEN_BUCKET)
          .tier(3, Duration.ofHours(1))
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
                // One instance: the host's clock, which never steps back under the bucket.
                .storeClock(false)
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
    // Until the bucket holds a permit again: a third of its hour after the first call.
    com.google.protobuf.Duration delay = retry.getRetryDelay();
    long delayNanos = delay.getSeconds() * 1_000_000_000L + delay.getNanos();
    assertTrue(
        delayNanos >= 1_100_000_000_000L && delayNanos <= 1_200_000_000_000L, retry::toString);
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
            .algorithm(Algorithm.TOKEN_BUCKET)
            .tier(2, Duration.ofHours(1))
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
    var keyed = ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(h));

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

  private static RequestLimiter limiter(RuleSet rules) {
    return RequestLimiter.builder(InMemoryCounterStore.create()).rules(rules).build();
  }

  private static Metadata forwardedFor(String client) {
    Metadata h = new Metadata();
    h.put(key("x-forwarded-for"), client);
    return h;
  }

  private static final Rule PER_CLIENT =
      Rule.builder("per-client")
          .path("/sluice.test.Echo/Say")
          .key("ip")
          .algorithm(Algorithm.TOKEN_BUCKET)
          .tier(2, Duration.ofHours(1))
          .build();

  @Test
  void aForwardedForFromAnUntrustedPeerIsIgnored() throws Exception {
    start(
        new SluiceServerInterceptor(
            limiter(
                RuleSet.builder()
                    .trustedProxies(List.of("10.0.0.0/8"))
                    .forwardedHeader(dev.sluice.http.ForwardedHeader.X_FORWARDED_FOR)
                    .rule(PER_CLIENT)
                    .build())));
    assertEquals("echo hi", say(forwardedFor("203.0.113.1")));
    assertEquals("echo hi", say(forwardedFor("203.0.113.2")));
    StatusRuntimeException e =
        assertThrows(StatusRuntimeException.class, () -> say(forwardedFor("203.0.113.3")));
    assertEquals(
        Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode(), "one peer, whatever it forges");
  }

  @Test
  void aForwardedForFromATrustedProxyNamesTheClient() throws Exception {
    start(
        new SluiceServerInterceptor(
            limiter(
                RuleSet.builder()
                    .trustedProxies(List.of("127.0.0.1/32"))
                    .forwardedHeader(dev.sluice.http.ForwardedHeader.X_FORWARDED_FOR)
                    .rule(PER_CLIENT)
                    .build())));
    for (int i = 0; i < 2; i++) {
      assertEquals("echo hi", say(forwardedFor("203.0.113.1")));
      assertEquals("echo hi", say(forwardedFor("203.0.113.2")));
    }
    StatusRuntimeException e =
        assertThrows(
            StatusRuntimeException.class, () -> say(forwardedFor("198.51.100.7, 203.0.113.1")));
    assertEquals(
        Status.Code.RESOURCE_EXHAUSTED,
        e.getStatus().getCode(),
        "the hop the proxy saw, not one the client put first");
  }

  static final Context.Key<String> USER = Context.key("user");

  /** What an authenticating interceptor does: the caller's user, in the call's context. */
  static final class Authenticating implements ServerInterceptor {
    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(
        ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
      String token = headers.get(key("authorization"));
      Context ctx = Context.current();
      if (token != null && token.startsWith("user ")) {
        ctx = ctx.withValue(USER, token.substring(5));
      }
      return Contexts.interceptCall(ctx, call, headers, next);
    }
  }

  private static Metadata user(String name) {
    Metadata h = new Metadata();
    h.put(key("authorization"), "user " + name);
    return h;
  }

  @Test
  void theUserIsWhatTheAuthenticatingInterceptorPutInTheContext() throws Exception {
    Rule perUser =
        Rule.builder("per-user")
            .path("/sluice.test.Echo/Say")
            .key("user")
            .algorithm(Algorithm.TOKEN_BUCKET)
            .tier(1, Duration.ofHours(1))
            .build();
    // The last interceptor given runs first: authentication, then the limit.
    start(
        new SluiceServerInterceptor(limiter(RuleSet.builder().rule(perUser).build()), USER),
        new Authenticating());
    assertEquals("echo hi", say(user("ann")));
    StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> say(user("ann")));
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode());
    assertTrue(e.getStatus().getDescription().contains("per-user"), e::toString);
    assertEquals("echo hi", say(user("bob")), "each user has their own limit");
    assertEquals("echo hi", say(new Metadata()), "no user: the rule does not apply");
    assertEquals("echo hi", say(new Metadata()));
  }

  static final Metadata.Key<byte[]> ID_BIN =
      Metadata.Key.of("x-id-bin", Metadata.BINARY_BYTE_MARSHALLER);

  private static Metadata binaryId(byte... id) {
    Metadata h = new Metadata();
    h.put(ID_BIN, id);
    return h;
  }

  private static Rule perBinaryId(String... key) {
    return Rule.builder("per-id")
        .path("/sluice.test.Echo/Say")
        .key(key)
        .algorithm(Algorithm.FIXED_WINDOW)
        .tier(3, Duration.ofHours(1))
        .build();
  }

  @Test
  void aBinaryMetadataKeyCountsItsValue() throws Exception {
    start(InMemoryCounterStore.create(), perBinaryId("header:x-id-bin"));
    byte[] one = {0, 1, 2, (byte) 0xff};
    for (int i = 0; i < 3; i++) {
      assertEquals("echo hi", say(binaryId(one)), "call " + i);
    }
    for (int i = 3; i < 6; i++) {
      StatusRuntimeException e =
          assertThrows(StatusRuntimeException.class, () -> say(binaryId(one)), "call " + i);
      assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode());
      assertTrue(e.getStatus().getDescription().contains("per-id"), e::toString);
    }
    byte[] two = {0, 1, 2, (byte) 0xfe};
    for (int i = 0; i < 3; i++) {
      assertEquals("echo hi", say(binaryId(two)), "another value counts apart, call " + i);
    }
    assertThrows(StatusRuntimeException.class, () -> say(binaryId(two)));
  }

  @Test
  void aBinaryMetadataKeyComesBeforeTheAddressFallback() throws Exception {
    start(InMemoryCounterStore.create(), perBinaryId("header:x-id-bin", "ip"));
    for (int id = 0; id < 3; id++) {
      for (int i = 0; i < 3; i++) {
        assertEquals("echo hi", say(binaryId((byte) id)), "id " + id + ", call " + i);
      }
      byte spent = (byte) id;
      StatusRuntimeException e =
          assertThrows(StatusRuntimeException.class, () -> say(binaryId(spent)), "id " + id);
      assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode());
    }
    // Nine calls passed from one address: none was counted under it.
    for (int i = 0; i < 3; i++) {
      assertEquals("echo hi", say(new Metadata()), "no id: the address, call " + i);
    }
    assertThrows(StatusRuntimeException.class, () -> say(new Metadata()));
  }

  @Test
  void aBinaryMetadataValueReadsAsUnpaddedBase64() throws Exception {
    List<String> seen = new CopyOnWriteArrayList<>();
    Rule echo =
        Rule.builder("seen")
            .path("/sluice.test.Echo/Say")
            .key("app:id")
            .tier(1000, Duration.ofHours(1))
            .build();
    start(
        new SluiceServerInterceptor(
            RequestLimiter.builder(InMemoryCounterStore.create())
                .rules(RuleSet.builder().rule(echo).build())
                .keyResolver(
                    "id",
                    r -> {
                      seen.add(String.join(",", r.headers("X-Id-Bin")));
                      return r.header("x-id-bin");
                    })
                .build()));
    Metadata h = new Metadata();
    h.put(ID_BIN, new byte[] {(byte) 0xfb, (byte) 0xff});
    h.put(ID_BIN, new byte[] {'a', 'b', 'c', 'd'});
    say(h);
    assertEquals(List.of("+/8,YWJjZA"), seen, "each value, as gRPC sends it on the wire");
  }

  @Test
  void aHeaderNameMetadataCannotHoldFallsBackToTheNextSource() throws Exception {
    start(InMemoryCounterStore.create(), perBinaryId("header:x id", "ip"));
    for (int i = 0; i < 3; i++) {
      assertEquals("echo hi", say("k" + i), "call " + i);
    }
    StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> say("k3"));
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode(), "counted by address");
  }

  @Test
  void anotherSpellingOfAMethodIsNeverServed() throws Exception {
    start(InMemoryCounterStore.create(), PER_KEY);
    for (String name :
        List.of("sluice.test.Echo/say", "sluice.test.echo/Say", "sluice.test.Echo//Say")) {
      MethodDescriptor<String, String> other = ECHO.toBuilder().setFullMethodName(name).build();
      StatusRuntimeException e =
          assertThrows(
              StatusRuntimeException.class,
              () ->
                  ClientCalls.blockingUnaryCall(
                      channel,
                      other,
                      CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS),
                      "hi"),
              name);
      assertEquals(Status.Code.UNIMPLEMENTED, e.getStatus().getCode(), name);
    }
  }

  @Test
  void manyStreamsAtOnceNeverHoldMoreSlotsThanTheLimit() throws Exception {
    Rule inFlight =
        Rule.builder("in-flight")
            .path("/sluice.test.Echo/Watch")
            .key("header:x-api-key")
            .concurrency(3, Duration.ofMinutes(5))
            .build();
    start(InMemoryCounterStore.create(), inFlight);
    Metadata h = new Metadata();
    h.put(API_KEY, "k");
    var keyed = ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(h));
    for (int round = 0; round < 2; round++) {
      int n = 12;
      java.util.concurrent.CountDownLatch answered = new java.util.concurrent.CountDownLatch(n);
      java.util.concurrent.atomic.AtomicInteger admitted =
          new java.util.concurrent.atomic.AtomicInteger();
      java.util.concurrent.atomic.AtomicInteger refused =
          new java.util.concurrent.atomic.AtomicInteger();
      for (int i = 0; i < n; i++) {
        ClientCalls.asyncServerStreamingCall(
            keyed.newCall(WATCH, CallOptions.DEFAULT),
            "s" + i,
            new StreamObserver<String>() {
              boolean first = true;

              @Override
              public void onNext(String value) {
                if (first) {
                  first = false;
                  admitted.incrementAndGet();
                  answered.countDown();
                }
              }

              @Override
              public void onError(Throwable t) {
                if (first && Status.fromThrowable(t).getCode() == Status.Code.RESOURCE_EXHAUSTED) {
                  first = false;
                  refused.incrementAndGet();
                  answered.countDown();
                }
              }

              @Override
              public void onCompleted() {}
            });
      }
      assertTrue(answered.await(20, TimeUnit.SECONDS), "every call answered");
      assertEquals(3, admitted.get(), "round " + round);
      assertEquals(n - 3, refused.get(), "round " + round);
      assertTrue(
          MemcachedServer.await(Duration.ofSeconds(10), () -> watching.size() == 3),
          "three streams open");
      // The three streams close: their slots come back for the next round.
      for (StreamObserver<String> w : watching) {
        w.onCompleted();
      }
      watching.clear();
    }
  }
}
