package io.sluice.server.http2;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor.MethodType;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.TransportConfig;
import io.sluice.core.config.UpstreamProtocol;
import io.sluice.server.Gateway;
import io.sluice.server.testing.GatewayFixture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * gRPC end to end: a grpc-java client (h2c) → the gateway → a grpc-java server (h2c) of an
 * {@code upstream_protocol: h2c} cluster. All four call types, deadlines, cancellation reaching
 * the server, error status and custom trailers unchanged, and the server's stream limit honoured.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class GrpcUpstreamIT {

    static final Metadata.Key<String> DETAIL = Metadata.Key.of("x-detail", Metadata.ASCII_STRING_MARSHALLER);

    private Server server;
    private Gateway gw;
    private ManagedChannel ch;
    private final LinkedBlockingQueue<String> cancelled = new LinkedBlockingQueue<>();
    private final AtomicInteger active = new AtomicInteger();
    private final AtomicInteger maxActive = new AtomicInteger();

    @BeforeAll
    void start() throws Exception {
        ServerServiceDefinition svc = ServerServiceDefinition.builder("test.Echo")
                .addMethod(GrpcBytes.unary("test.Echo/Unary"), ServerCalls.asyncUnaryCall((req, out) -> {
                    out.onNext(req);
                    out.onCompleted();
                }))
                .addMethod(GrpcBytes.of("test.Echo/Slow", MethodType.UNARY), ServerCalls.asyncUnaryCall((req, out) -> {
                    int now = active.incrementAndGet();
                    maxActive.accumulateAndGet(now, Math::max);
                    CompletableFuture.delayedExecutor(50, TimeUnit.MILLISECONDS).execute(() -> {
                        active.decrementAndGet();
                        out.onNext(req);
                        out.onCompleted();
                    });
                }))
                .addMethod(GrpcBytes.of("test.Echo/ServerStream", MethodType.SERVER_STREAMING),
                        ServerCalls.asyncServerStreamingCall((req, out) -> {
                            for (int i = 0; i < req[0]; i++) {
                                out.onNext(new byte[] {(byte) i});
                            }
                            out.onCompleted();
                        }))
                .addMethod(GrpcBytes.of("test.Echo/ClientStream", MethodType.CLIENT_STREAMING),
                        ServerCalls.asyncClientStreamingCall(out -> new StreamObserver<byte[]>() {
                            final ByteArrayOutputStream all = new ByteArrayOutputStream();

                            @Override
                            public void onNext(byte[] v) {
                                all.writeBytes(v);
                            }

                            @Override
                            public void onError(Throwable t) {
                            }

                            @Override
                            public void onCompleted() {
                                out.onNext(all.toByteArray());
                                out.onCompleted();
                            }
                        }))
                .addMethod(GrpcBytes.of("test.Echo/Bidi", MethodType.BIDI_STREAMING),
                        ServerCalls.asyncBidiStreamingCall(out -> new StreamObserver<byte[]>() {
                            @Override
                            public void onNext(byte[] v) {
                                out.onNext(v);
                            }

                            @Override
                            public void onError(Throwable t) {
                            }

                            @Override
                            public void onCompleted() {
                                out.onCompleted();
                            }
                        }))
                .addMethod(GrpcBytes.unary("test.Echo/Fail"), ServerCalls.asyncUnaryCall((req, out) -> {
                    Metadata t = new Metadata();
                    t.put(DETAIL, "abc");
                    out.onError(Status.NOT_FOUND.withDescription("no such thing").asRuntimeException(t));
                }))
                .addMethod(GrpcBytes.unary("test.Echo/Hang"), ServerCalls.asyncUnaryCall((req, out) -> {
                    ((io.grpc.stub.ServerCallStreamObserver<byte[]>) out).setOnCancelHandler(
                            () -> cancelled.add(new String(req, java.nio.charset.StandardCharsets.US_ASCII)));
                }))
                .addMethod(GrpcBytes.unary("test.Echo/HangShort"), ServerCalls.asyncUnaryCall((req, out) -> {
                    ((io.grpc.stub.ServerCallStreamObserver<byte[]>) out).setOnCancelHandler(
                            () -> cancelled.add(new String(req, java.nio.charset.StandardCharsets.US_ASCII)));
                }))
                .build();
        // at most 2 concurrent streams per connection
        server = io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .maxConcurrentCallsPerConnection(2).addService(svc).build().start();
        ClusterConfig c = ClusterConfig.builder().name("grpc")
                .hosts(new HostConfig("127.0.0.1", server.getPort(), 1))
                .upstreamProtocol(UpstreamProtocol.H2C).build();
        gw = GatewayFixture.start(GatewayConfig.builder()
                .listeners(ListenerConfig.builder().name("web").routes(
                        new RouteConfig("short", io.sluice.core.config.RouteMatch.pathPrefix("/test.Echo/HangShort"), "grpc", null,
                                Duration.ofMillis(400)),
                        RouteConfig.to("grpc")).build())
                .clusters(c).admin(AdminConfig.disabled())
                .transport(TransportConfig.builder().workerThreads(1).backlog(128).build())
                .drainTimeout(Duration.ofSeconds(2)).build());
        ch = Grpc.newChannelBuilderForAddress("127.0.0.1", gw.port("web"), InsecureChannelCredentials.create()).build();
        // warm up client, gateway and server: a cold server could get the gateway's cancel (HangShort, 400 ms)
        // before it ran the call's handler, which then never registers its cancel handler
        ClientCalls.blockingUnaryCall(ch, GrpcBytes.unary("test.Echo/Unary"), deadline(10_000), new byte[] {1});
    }

    @AfterAll
    void stop() throws Exception {
        if (ch != null) {
            ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        if (gw != null) {
            gw.shutdown().orTimeout(30, TimeUnit.SECONDS).join();
        }
        if (server != null) {
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    private static CallOptions deadline(long ms) {
        return CallOptions.DEFAULT.withDeadlineAfter(ms, TimeUnit.MILLISECONDS);
    }

    @Test
    void unaryAndServerStreaming() {
        byte[] r = ClientCalls.blockingUnaryCall(ch, GrpcBytes.unary("test.Echo/Unary"), deadline(5000), "hi".getBytes());
        assertThat(new String(r)).isEqualTo("hi");
        Iterator<byte[]> it = ClientCalls.blockingServerStreamingCall(ch,
                GrpcBytes.of("test.Echo/ServerStream", MethodType.SERVER_STREAMING), deadline(5000), new byte[] {5});
        List<Integer> got = new ArrayList<>();
        it.forEachRemaining(b -> got.add((int) b[0]));
        assertThat(got).containsExactly(0, 1, 2, 3, 4);
    }

    @Test
    void clientStreamingAndBidi() throws Exception {
        CompletableFuture<byte[]> sum = new CompletableFuture<>();
        StreamObserver<byte[]> up = ClientCalls.asyncClientStreamingCall(ch.newCall(
                GrpcBytes.of("test.Echo/ClientStream", MethodType.CLIENT_STREAMING), deadline(5000)), observer(sum, null));
        up.onNext("ab".getBytes());
        up.onNext("cd".getBytes());
        up.onCompleted();
        assertThat(new String(sum.get(5, TimeUnit.SECONDS))).isEqualTo("abcd");

        CompletableFuture<byte[]> bidiDone = new CompletableFuture<>();
        LinkedBlockingQueue<byte[]> echoes = new LinkedBlockingQueue<>();
        StreamObserver<byte[]> bidi = ClientCalls.asyncBidiStreamingCall(ch.newCall(
                GrpcBytes.of("test.Echo/Bidi", MethodType.BIDI_STREAMING), deadline(5000)), observer(bidiDone, echoes));
        bidi.onNext("one".getBytes());
        assertThat(new String(echoes.poll(5, TimeUnit.SECONDS))).isEqualTo("one"); // an answer before the next message
        bidi.onNext("two".getBytes());
        assertThat(new String(echoes.poll(5, TimeUnit.SECONDS))).isEqualTo("two");
        bidi.onCompleted();
        bidiDone.get(5, TimeUnit.SECONDS);
    }

    @Test
    void serverErrorStatusAndTrailersReachTheClientUnchanged() {
        assertThatThrownBy(() -> ClientCalls.blockingUnaryCall(ch, GrpcBytes.unary("test.Echo/Fail"), deadline(5000), new byte[0]))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND);
                    assertThat(e.getStatus().getDescription()).isEqualTo("no such thing");
                    assertThat(e.getTrailers().get(DETAIL)).isEqualTo("abc");
                });
    }

    @Test
    void deadlineExceededAndTheServerSeesTheCancel() throws Exception {
        assertThatThrownBy(() -> ClientCalls.blockingUnaryCall(ch, GrpcBytes.unary("test.Echo/Hang"), deadline(300), "deadline".getBytes()))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED));
        assertThat(cancelledCall("deadline")).isTrue();
    }

    /** The route timeout caps the call's deadline at the gateway: DEADLINE_EXCEEDED and the server's call cancelled. */
    @Test
    void theGatewaysDeadlineCancelsTheServersCall() throws Exception {
        assertThatThrownBy(() -> ClientCalls.blockingUnaryCall(ch, GrpcBytes.unary("test.Echo/HangShort"), deadline(8000), "gw".getBytes()))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
                    assertThat(e.getStatus().getDescription()).contains("grpc-timeout");
                });
        assertThat(cancelledCall("gw")).isTrue();
    }

    @Test
    void clientCancellationReachesTheServer() throws Exception {
        ClientCall<byte[], byte[]> call = ch.newCall(GrpcBytes.unary("test.Echo/Hang"), deadline(10_000));
        CountDownLatch closed = new CountDownLatch(1);
        call.start(new ClientCall.Listener<>() {
            @Override
            public void onClose(Status status, Metadata trailers) {
                closed.countDown();
            }
        }, new Metadata());
        call.sendMessage("cancel-me".getBytes());
        call.halfClose();
        call.request(1);
        Thread.sleep(200); // the call reaches the server (a real peer: no hook to wait on)
        call.cancel("test", null);
        assertThat(closed.await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(cancelledCall("cancel-me")).isTrue();
    }

    @Test
    void theUpstreamsStreamLimitIsHonoured() throws Exception {
        List<CompletableFuture<byte[]>> calls = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            CompletableFuture<byte[]> f = new CompletableFuture<>();
            ClientCalls.asyncUnaryCall(ch.newCall(GrpcBytes.of("test.Echo/Slow", MethodType.UNARY), deadline(10_000)),
                    new byte[] {(byte) i}, observer(f, null));
            calls.add(f);
        }
        for (int i = 0; i < 10; i++) {
            assertThat(calls.get(i).get(10, TimeUnit.SECONDS)).containsExactly((byte) i);
        }
    }

    /** Whether the server saw the call carrying {@code payload} cancelled within 5 s (calls of other tests are skipped). */
    private boolean cancelledCall(String payload) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        for (long left; (left = until - System.nanoTime()) > 0; ) {
            String c = cancelled.poll(left, TimeUnit.NANOSECONDS);
            if (payload.equals(c)) {
                return true;
            }
        }
        return false;
    }

    private static StreamObserver<byte[]> observer(CompletableFuture<byte[]> done, LinkedBlockingQueue<byte[]> each) {
        return new StreamObserver<>() {
            byte[] last;

            @Override
            public void onNext(byte[] v) {
                last = v;
                if (each != null) {
                    each.add(v);
                }
            }

            @Override
            public void onError(Throwable t) {
                done.completeExceptionally(t);
            }

            @Override
            public void onCompleted() {
                done.complete(last == null ? new byte[0] : last);
            }
        };
    }
}
