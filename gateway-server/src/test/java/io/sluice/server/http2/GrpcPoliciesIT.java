package io.sluice.server.http2;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.sluice.server.Gateway;
import io.sluice.server.config.ConfigLoader;
import io.sluice.server.testing.GatewayFixture;
import io.sluice.server.testing.Ports;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * gRPC calls (a grpc-java client, h2c) through the gateway to a grpc-java server of an
 * {@code upstream_protocol: h2c} cluster, with the policies of HTTP/1.1 requests: a rate-limited
 * call fails UNAVAILABLE with the reason (its refill on the injected ticker), the {@code max_requests}
 * breaker sheds with UNAVAILABLE, and retries move a call off a dead host (connect failure) and
 * off a host that answers HTTP 503 (another gateway's direct response, over h2c) — the client sees OK.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(60)
class GrpcPoliciesIT {

    private final AtomicLong now = new AtomicLong(5_000_000_000L);
    private final AtomicInteger served = new AtomicInteger();
    private final AtomicInteger attemptHeaders = new AtomicInteger();
    private final CountDownLatch hanging = new CountDownLatch(1);
    private Server server;
    private Gateway busy;
    private Gateway gw;
    private ManagedChannel ch;

    @BeforeAll
    void start() throws Exception {
        Metadata.Key<String> attempt = Metadata.Key.of("x-sluice-attempt", Metadata.ASCII_STRING_MARSHALLER);
        ServerServiceDefinition svc = ServerServiceDefinition.builder("test.Echo")
                .addMethod(GrpcBytes.unary("test.Echo/Unary"), ServerCalls.asyncUnaryCall((req, out) -> {
                    served.incrementAndGet();
                    out.onNext(req);
                    out.onCompleted();
                }))
                .addMethod(GrpcBytes.unary("test.Echo/Hang"), ServerCalls.asyncUnaryCall((req, out) -> hanging.countDown()))
                .build();
        server = io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addService(io.grpc.ServerInterceptors.intercept(svc, new io.grpc.ServerInterceptor() {
                    @Override
                    public <Q, R> io.grpc.ServerCall.Listener<Q> interceptCall(io.grpc.ServerCall<Q, R> call, Metadata h,
                                                                              io.grpc.ServerCallHandler<Q, R> next) {
                        if ("2".equals(h.get(attempt))) {
                            attemptHeaders.incrementAndGet();
                        }
                        return next.startCall(call, h);
                    }
                })).build().start();
        // a second gateway whose every stream is answered 503: an h2c host that fails with a 5xx
        busy = GatewayFixture.start(ConfigLoader.parse("""
                {"listeners": [{"name": "web", "port": 0, "routes": [{"match": {"path": {"prefix": "/"}},
                   "direct_response": {"status": 503, "body": "starting"}}]}],
                 "clusters": [], "admin": {"enabled": false}, "drain_timeout": "200ms", "transport": {"worker_threads": 1}}
                """, "busy").config());
        int dead = Ports.free();
        String json = """
                {
                  "listeners": [{"name": "web", "port": 0, "routes": [
                    {"name": "limited", "match": {"path": {"prefix": "/test.Echo/Unary"}, "headers": [{"name": "x-limited", "exact": "1"}]},
                     "cluster": "grpc"},
                    {"name": "hang", "match": {"path": {"prefix": "/test.Echo/Hang"}}, "cluster": "held"},
                    {"name": "dead-first", "match": {"path": {"prefix": "/test.Echo/Unary"}, "headers": [{"name": "x-via", "exact": "dead"}]},
                     "cluster": "with-dead", "retry_policy": {"retry_on": "connect-failure", "num_retries": 1}},
                    {"name": "busy-first", "match": {"path": {"prefix": "/test.Echo/Unary"}, "headers": [{"name": "x-via", "exact": "busy"}]},
                     "cluster": "with-busy", "retry_policy": {"retry_on": "5xx", "num_retries": 1, "retry_non_idempotent": true}},
                    {"match": {"path": {"prefix": "/"}}, "cluster": "grpc"}
                  ]}],
                  "clusters": [
                    {"name": "grpc", "upstream_protocol": "h2c", "hosts": ["127.0.0.1:%d"]},
                    {"name": "held", "upstream_protocol": "h2c", "hosts": ["127.0.0.1:%d"], "circuit_breakers": {"max_requests": 1}},
                    {"name": "with-dead", "upstream_protocol": "h2c", "hosts": ["127.0.0.1:%d", "127.0.0.1:%d"]},
                    {"name": "with-busy", "upstream_protocol": "h2c", "hosts": ["127.0.0.1:%d", "127.0.0.1:%d"]}
                  ],
                  "rate_limit": {"rules": [{"name": "one", "routes": ["limited"], "max_tokens": 1, "fill_interval": "1s"}]},
                  "admin": {"enabled": false}, "drain_timeout": "200ms", "transport": {"worker_threads": 1}
                }
                """.formatted(server.getPort(), server.getPort(), dead, server.getPort(), busy.port("web"), server.getPort());
        gw = Gateway.builder().config(ConfigLoader.parse(json, "test").config()).ticker(now::get)
                .random(new SplittableRandom(7)).build().start().orTimeout(30, TimeUnit.SECONDS).join();
        ch = Grpc.newChannelBuilderForAddress("127.0.0.1", gw.port("web"), InsecureChannelCredentials.create())
                .disableRetry().build(); // no transparent retries by the client: only the gateway's count
    }

    @AfterAll
    void stop() throws Exception {
        if (ch != null) {
            ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        for (Gateway g : new Gateway[] {gw, busy}) {
            if (g != null) {
                g.shutdown().orTimeout(30, TimeUnit.SECONDS).join();
            }
        }
        if (server != null) {
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    private byte[] call(String via, String value) {
        Metadata h = new Metadata();
        h.put(Metadata.Key.of(via, Metadata.ASCII_STRING_MARSHALLER), value);
        return ClientCalls.blockingUnaryCall(io.grpc.ClientInterceptors.intercept(ch,
                        io.grpc.stub.MetadataUtils.newAttachHeadersInterceptor(h)), GrpcBytes.unary("test.Echo/Unary"),
                CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), "hi".getBytes(StandardCharsets.US_ASCII));
    }

    @Test
    void aRateLimitedCallFailsUnavailableWithTheReasonUntilTheRefill() {
        assertThat(new String(call("x-limited", "1"), StandardCharsets.US_ASCII)).isEqualTo("hi");
        assertThatThrownBy(() -> call("x-limited", "1")).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(e.getStatus().getDescription()).isEqualTo("rate limited on route limited");
        });
        now.addAndGet(TimeUnit.SECONDS.toNanos(1));
        assertThat(new String(call("x-limited", "1"), StandardCharsets.US_ASCII)).as("refilled on the ticker").isEqualTo("hi");
    }

    @Test
    void theBreakerShedsACallWithUnavailable() throws Exception {
        ClientCall<byte[], byte[]> first = ch.newCall(GrpcBytes.unary("test.Echo/Hang"),
                CallOptions.DEFAULT.withDeadlineAfter(20, TimeUnit.SECONDS));
        first.start(new ClientCall.Listener<>() {
        }, new Metadata());
        first.sendMessage(new byte[] {1});
        first.halfClose();
        first.request(1);
        assertThat(hanging.await(10, TimeUnit.SECONDS)).isTrue();
        assertThatThrownBy(() -> ClientCalls.blockingUnaryCall(ch, GrpcBytes.unary("test.Echo/Hang"),
                CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), new byte[] {2}))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
                    assertThat(e.getStatus().getDescription()).contains("max_requests");
                });
        first.cancel("done", null);
        await().atMost(Duration.ofSeconds(10)).until(() -> gw.meterRegistry().get("sluice.cluster.breaker.remaining")
                .tags("cluster", "held", "resource", "requests").gauge().value() == 1);
    }

    @Test
    void aDeadHostIsRetriedOnTheNextOne() {
        int before = served.get();
        for (int i = 0; i < 4; i++) {
            assertThat(new String(call("x-via", "dead"), StandardCharsets.US_ASCII)).isEqualTo("hi");
        }
        assertThat(served.get() - before).isEqualTo(4);
        // the EDF picks alternate; the first call's pick is the live host, and from then on the retry's pick
        // takes the live host each time, so every later first try meets the dead one: 3 retries
        assertThat(gw.meterRegistry().get("sluice.cluster.retries").tags("cluster", "with-dead", "outcome", "retried")
                .functionCounter().count()).isEqualTo(3);
    }

    @Test
    void aHostAnswering503IsRetriedOn5xx() {
        int before = served.get();
        int attempts = attemptHeaders.get();
        for (int i = 0; i < 4; i++) {
            assertThat(new String(call("x-via", "busy"), StandardCharsets.US_ASCII)).isEqualTo("hi");
        }
        assertThat(served.get() - before).isEqualTo(4);
        double answered503 = busy.meterRegistry().find("sluice.requests").counters().stream().mapToDouble(c -> c.count()).sum();
        assertThat(answered503).as("the 503s were never relayed").isGreaterThan(0);
        assertThat(attemptHeaders.get() - attempts).as("each retry says x-sluice-attempt: 2").isEqualTo((int) answered503);
        assertThat(gw.meterRegistry().get("sluice.cluster.retries").tags("cluster", "with-busy", "outcome", "retried")
                .functionCounter().count()).isEqualTo(answered503);
    }
}
