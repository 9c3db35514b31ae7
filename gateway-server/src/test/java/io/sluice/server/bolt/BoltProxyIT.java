package io.sluice.server.bolt;

import com.alipay.remoting.BizContext;
import com.alipay.remoting.InvokeCallback;
import com.alipay.remoting.exception.ConnectionClosedException;
import com.alipay.remoting.rpc.RpcClient;
import com.alipay.remoting.rpc.RpcResponseFuture;
import com.alipay.remoting.rpc.RpcServer;
import com.alipay.remoting.rpc.exception.InvokeException;
import com.alipay.remoting.rpc.exception.InvokeTimeoutException;
import com.alipay.remoting.rpc.protocol.SyncUserProcessor;
import io.sluice.codec.bolt.BoltFraming;
import io.sluice.codec.bolt.BoltStatus;
import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.BoltOptions;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.LbPolicy;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.Protocol;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.RouteMatch;
import io.sluice.core.config.StringMatch;
import io.sluice.core.config.TransportConfig;
import io.sluice.server.Gateway;
import io.sluice.server.demo.DemoBoltBackend;
import io.sluice.server.testing.GatewayFixture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * The Bolt proxy end to end on loopback: the real bolt {@code RpcClient} (and raw sockets) →
 * gateway → the real bolt {@code RpcServer} ({@link DemoBoltBackend} and test servers).
 *
 * <p>Listeners: {@code bolt} (default cluster {@code echo}), {@code slow} (default cluster of a
 * server that sleeps, 300 ms response timeout), {@code doomed} (default cluster of a server that
 * holds requests and is killed), {@code strict} (only service {@code com.alipay.test.TestService:1.0}
 * is routed, no default: anything else gets NO_PROCESSOR).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BoltProxyIT {

    private static final String V2 = "?_PROTOCOL=2&_VERSION=2";
    private static final String SOFA_SERVICE = "com.alipay.test.TestService:1.0";

    private DemoBoltBackend echo;
    private RpcServer slow;
    private RpcServer doomed;
    private final AtomicInteger doomedReceived = new AtomicInteger();
    private final CountDownLatch doomedRelease = new CountDownLatch(1);
    private Gateway gw;
    private RpcClient clientV1;
    private RpcClient clientV2;

    @BeforeAll
    void start() {
        echo = DemoBoltBackend.start("127.0.0.1", 0);
        slow = server(new SyncUserProcessor<String>() {
            @Override
            public Object handleRequest(BizContext ctx, String req) throws Exception {
                Thread.sleep(Long.parseLong(req.substring("sleep:".length())));
                return "slept";
            }

            @Override
            public String interest() {
                return String.class.getName();
            }
        });
        doomed = server(new SyncUserProcessor<String>() {
            @Override
            public Object handleRequest(BizContext ctx, String req) throws Exception {
                doomedReceived.incrementAndGet();
                doomedRelease.await(30, TimeUnit.SECONDS);
                return req;
            }

            @Override
            public String interest() {
                return String.class.getName();
            }
        });
        List<ClusterConfig> clusters = List.of(
                cluster("echo", echo.port(), Duration.ofSeconds(15)),
                cluster("slow", slow.port(), Duration.ofMillis(300)),
                cluster("doomed", doomed.port(), Duration.ofSeconds(15)));
        List<ListenerConfig> listeners = List.of(
                listener("bolt", List.of(), "echo"),
                listener("slow", List.of(), "slow"),
                listener("doomed", List.of(), "doomed"),
                ListenerConfig.builder().name("narrow").protocol(Protocol.BOLT)
                        .bolt(BoltOptions.builder().maxFrameLength(4 << 20).defaultCluster("slow").maxInFlight(2).build()).build(),
                ListenerConfig.builder().name("brief").protocol(Protocol.BOLT)
                        .bolt(BoltOptions.builder().maxFrameLength(4 << 20).idleTimeout(Duration.ofMillis(600))
                                .defaultCluster("echo").build()).build(),
                listener("strict", List.of(new RouteConfig("sofa", new RouteMatch(null, null, null, null,
                        StringMatch.exact(SOFA_SERVICE), null), "echo", null, null)), null));
        gw = GatewayFixture.start(GatewayConfig.builder().listeners(listeners).clusters(clusters).admin(AdminConfig.disabled())
                .transport(TransportConfig.builder().workerThreads(2).backlog(128).build())
                .drainTimeout(Duration.ofSeconds(5)).build());
        clientV1 = new RpcClient();
        clientV1.startup();
        clientV2 = new RpcClient();
        clientV2.startup();
    }

    @AfterAll
    void stop() {
        doomedRelease.countDown();
        for (AutoCloseable c : new AutoCloseable[] {clientV1::shutdown, clientV2::shutdown, gw, echo::close,
                slow::shutdown, doomed::shutdown}) {
            try {
                c.close();
            } catch (Exception e) {
                // best effort: the rest still closes
            }
        }
    }

    private static RpcServer server(SyncUserProcessor<String> processor) {
        RpcServer s = new RpcServer("127.0.0.1", 0, true);
        s.registerUserProcessor(processor);
        s.startup();
        return s;
    }

    private static ClusterConfig cluster(String name, int port, Duration responseTimeout) {
        return ClusterConfig.builder().name(name).protocol(Protocol.BOLT).lb(LbPolicy.ROUND_ROBIN)
                .hosts(new HostConfig("127.0.0.1", port, 1)).connectTimeout(Duration.ofSeconds(2))
                .responseTimeout(responseTimeout).build();
    }

    private static ListenerConfig listener(String name, List<RouteConfig> routes, String defaultCluster) {
        return ListenerConfig.builder().name(name).protocol(Protocol.BOLT).routes(routes)
                .bolt(BoltOptions.builder().maxFrameLength(4 << 20).defaultCluster(defaultCluster).build()).build();
    }

    private String addr(String listener, String suffix) {
        return "127.0.0.1:" + gw.port(listener) + suffix;
    }

    private RpcClient client(String suffix) {
        return suffix.isEmpty() ? clientV1 : clientV2;
    }

    // ------------------------------------------------------------------ the four invoke styles

    @ParameterizedTest
    @ValueSource(strings = {"", V2})
    void syncFutureCallbackAndOneway(String suffix) throws Exception {
        RpcClient c = client(suffix);
        String a = addr("bolt", suffix);
        assertThat(c.invokeSync(a, "hello sync", 5000)).isEqualTo("hello sync");

        RpcResponseFuture f = c.invokeWithFuture(a, "hello future", 5000);
        assertThat(f.get(5000)).isEqualTo("hello future");

        CompletableFuture<Object> cb = new CompletableFuture<>();
        c.invokeWithCallback(a, "hello callback", new InvokeCallback() {
            @Override
            public void onResponse(Object result) {
                cb.complete(result);
            }

            @Override
            public void onException(Throwable e) {
                cb.completeExceptionally(e);
            }

            @Override
            public Executor getExecutor() {
                return null;
            }
        }, 5000);
        assertThat(cb.get(5, TimeUnit.SECONDS)).isEqualTo("hello callback");

        long before = echo.handled();
        c.oneway(a, "fire and forget");
        await().atMost(Duration.ofSeconds(5)).until(() -> echo.handled() > before);
        // the connection still works after an untracked oneway
        assertThat(c.invokeSync(a, "after oneway", 5000)).isEqualTo("after oneway");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", V2})
    void carriesOneKibAndOneMibPayloads(String suffix) throws Exception {
        for (int size : new int[] {1024, 1 << 20}) {
            StringBuilder sb = new StringBuilder(size);
            for (int i = 0; i < size; i++) {
                sb.append((char) ('a' + i % 26));
            }
            String payload = sb.toString();
            assertThat((String) client(suffix).invokeSync(addr("bolt", suffix), payload, 10_000)).isEqualTo(payload);
        }
    }

    @Test
    void thousandConcurrentCallsOverFewConnections() throws Exception {
        List<RpcResponseFuture> futures = new ArrayList<>();
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            String suffix = i % 2 == 0 ? "" : V2;
            String req = "call-" + i;
            futures.add(client(suffix).invokeWithFuture(addr("bolt", suffix), req, 15_000));
            expected.add(req);
        }
        for (int i = 0; i < futures.size(); i++) {
            assertThat(futures.get(i).get(15_000)).isEqualTo(expected.get(i));
        }
        // per event loop (2), per framing (v1, v2/ver1 2), one connection per host
        assertThat(gw.idleUpstreamConnections("bolt")).isBetween(1, 4);
    }

    @Test
    void twoClientsUsingTheSameRequestIdsGetTheirOwnAnswers() throws Exception {
        int n = 50;
        try (RawBolt x = new RawBolt(gw.port("bolt")); RawBolt y = new RawBolt(gw.port("bolt"))) {
            for (int id = 1; id <= n; id++) {
                x.write(RawBolt.stringRequest(BoltFraming.V1, id, "java.lang.String", Map.of(), "x-" + id));
                y.write(RawBolt.stringRequest(BoltFraming.V1, id, "java.lang.String", Map.of(), "y-" + id));
            }
            for (RawBolt peer : new RawBolt[] {x, y}) {
                String tag = peer == x ? "x-" : "y-";
                boolean[] seen = new boolean[n + 1];
                for (int i = 0; i < n; i++) {
                    RawBolt.Response r = peer.read();
                    assertThat(r.status()).isEqualTo(BoltStatus.SUCCESS);
                    assertThat(r.protocol()).isEqualTo(1);
                    assertThat(r.text()).endsWith(tag + r.id()); // responses may come back in any order
                    assertThat(seen[r.id()]).isFalse();
                    seen[r.id()] = true;
                }
            }
        }
    }

    @Test
    void aClientThatDoesNotReadIsNotReadEither() throws Exception {
        int n = 12_000;
        String body = "x".repeat(4096);
        try (RawBolt raw = new RawBolt(gw.port("bolt"))) {
            AtomicInteger written = new AtomicInteger();
            Thread writer = new Thread(() -> {
                try {
                    for (int id = 1; id <= n; id++) {
                        raw.write(RawBolt.longStringRequest(BoltFraming.V1, id, body));
                        written.incrementAndGet();
                    }
                } catch (java.io.IOException e) {
                    // the assertions below fail
                }
            }, "slow-client-writer");
            writer.start();
            // the client reads nothing: once the socket buffers are full the gateway stops reading
            // it, so the writer stalls long before it is done and little is held in flight
            int last;
            do {
                last = written.get();
                Thread.sleep(500);
            } while (written.get() != last);
            assertThat(written.get()).as("requests the gateway accepted from a client that does not read").isLessThan(n);
            assertThat(gw.activeRequests()).isLessThanOrEqualTo(BoltOptions.DEFAULT_MAX_IN_FLIGHT);
            // now it reads: everything is answered, nothing was dropped
            for (int i = 0; i < n; i++) {
                RawBolt.Response r = raw.read();
                assertThat(r.status()).isEqualTo(BoltStatus.SUCCESS);
                assertThat(r.content()).hasSize(3 + body.length());
            }
            writer.join(10_000);
            assertThat(written.get()).isEqualTo(n);
        }
    }

    @Test
    void requestsBeyondTheConnectionsInFlightLimitAreAnsweredBusyAtOnce() throws Exception {
        // listener "narrow": max_in_flight_per_connection 2, in front of a server that takes 200 ms
        java.io.ByteArrayOutputStream five = new java.io.ByteArrayOutputStream();
        for (int id = 1; id <= 5; id++) {
            five.write(RawBolt.stringRequest(BoltFraming.V1, id, "java.lang.String", Map.of(), "sleep:200"));
        }
        try (RawBolt raw = new RawBolt(gw.port("narrow"))) {
            long t0 = System.nanoTime();
            raw.write(five.toByteArray()); // one segment: the gateway reads the five together
            java.util.List<RawBolt.Response> answers = new java.util.ArrayList<>();
            for (int i = 0; i < 5; i++) {
                answers.add(raw.read());
            }
            // the three over the limit come back first, at once and with a reason, not after the slow two
            assertThat(answers.subList(0, 3)).extracting(RawBolt.Response::id).containsExactlyInAnyOrder(3, 4, 5);
            assertThat(answers.subList(0, 3)).allSatisfy(r -> {
                assertThat(r.status()).isEqualTo(BoltStatus.SERVER_THREADPOOL_BUSY);
                assertThat(r.text()).contains("max_in_flight_per_connection");
            });
            assertThat(answers.subList(3, 5)).extracting(RawBolt.Response::id).containsExactlyInAnyOrder(1, 2);
            assertThat(answers.subList(3, 5)).extracting(RawBolt.Response::status).containsOnly(BoltStatus.SUCCESS);
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).isGreaterThanOrEqualTo(200);
            // the connection reads again once its requests are answered
            raw.write(RawBolt.stringRequest(BoltFraming.V1, 6, "java.lang.String", Map.of(), "sleep:1"));
            RawBolt.Response sixth = raw.read();
            assertThat(sixth.id()).isEqualTo(6);
            assertThat(sixth.status()).isEqualTo(BoltStatus.SUCCESS);
        }
    }

    // ------------------------------------------------------------------ failures

    @Test
    void serverTooSlowTimesOutWithTheGatewaysTimeout() {
        long t0 = System.nanoTime();
        Throwable thrown = catchThrowable(() -> clientV1.invokeSync(addr("slow", ""), "sleep:3000", 10_000));
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertThat(thrown).isExactlyInstanceOf(InvokeTimeoutException.class);
        assertThat(ms).as("the cluster's 300 ms cap, not the client's 10 s").isLessThan(2500);
    }

    @Test
    void noRouteIsNoProcessor() throws Exception {
        Throwable thrown = catchThrowable(() -> clientV1.invokeSync(addr("strict", ""), "who routes me?", 5000));
        assertThat(thrown).isExactlyInstanceOf(InvokeException.class);
        try (RawBolt raw = new RawBolt(gw.port("strict"))) {
            raw.write(RawBolt.stringRequest(BoltFraming.V1, 7, "java.lang.String", Map.of("service", "other:1.0"), "x"));
            RawBolt.Response r = raw.read();
            assertThat(r.id()).isEqualTo(7);
            assertThat(r.status()).isEqualTo(BoltStatus.NO_PROCESSOR);
            assertThat(r.content()).isNotEmpty();
            assertThat(r.text()).contains("no route for service other:1.0");
        }
        double noRoute = gw.meterRegistry().find("sluice.requests")
                .tags("listener", "strict", "protocol", "bolt", "outcome", "no_route").counters().stream()
                .mapToDouble(io.micrometer.core.instrument.Counter::count).sum();
        assertThat(noRoute).isEqualTo(2);
    }

    @Test
    void sofaloadsRequestIsRoutedOnTheServiceHeaderAndAnswered() throws Exception {
        try (RawBolt raw = new RawBolt(gw.port("strict"))) {
            for (int id = 1; id <= 3; id++) {
                raw.write(RawBolt.stringRequest(BoltFraming.V1, id, DemoBoltBackend.SOFA_REQUEST_CLASS,
                        Map.of("service", SOFA_SERVICE), "1234567890"));
                RawBolt.Response r = raw.read();
                assertThat(r.id()).isEqualTo(id);
                assertThat(r.status()).isEqualTo(BoltStatus.SUCCESS);
                assertThat(r.className()).isEqualTo("java.lang.String");
                assertThat(r.text()).endsWith("ok");
            }
        }
    }

    @Test
    void serverKilledMidFlightFailsPendingAtOnce() throws Exception {
        List<RpcResponseFuture> futures = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            futures.add(clientV1.invokeWithFuture(addr("doomed", ""), "held-" + i, 20_000));
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> doomedReceived.get() >= 5);
        long t0 = System.nanoTime();
        doomed.shutdown();
        for (RpcResponseFuture f : futures) {
            Throwable thrown = catchThrowable(() -> f.get(10_000));
            assertThat(thrown).isExactlyInstanceOf(ConnectionClosedException.class);
        }
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).isLessThan(3000);
        // and the next call cannot connect: answered at once, not left to time out
        Throwable next = catchThrowable(() -> clientV1.invokeSync(addr("doomed", ""), "anyone?", 10_000));
        assertThat(next).isExactlyInstanceOf(InvokeException.class);
    }

    @Test
    void gracefulShutdownAnswersWhatIsInFlight() throws Exception {
        Gateway g = GatewayFixture.start(new GatewayConfig(List.of(listener("bolt", List.of(), "slow")),
                List.of(cluster("slow", slow.port(), Duration.ofSeconds(15))), AdminConfig.disabled(),
                new TransportConfig("auto", 1, 128), Duration.ofSeconds(15)));
        // generous bounds: the shared slow backend may still be sleeping for another test's request,
        // and a drain that ran out would close the connection (a different failure than the one tested)
        RpcResponseFuture f = clientV1.invokeWithFuture("127.0.0.1:" + g.port("bolt"), "sleep:500", 15_000);
        await().atMost(Duration.ofSeconds(10)).until(() -> g.activeRequests() == 1);
        CompletableFuture<Void> closed = g.shutdown();
        assertThat(f.get(15_000)).isEqualTo("slept");
        closed.get(15, TimeUnit.SECONDS);
        assertThat(g.activeRequests()).isZero();
    }

    // ------------------------------------------------------------------ heartbeats and bad input

    @Test
    void idleClientsAreClosedWhileHeartbeatingOnesStay() throws Exception {
        try (RawBolt quiet = new RawBolt(gw.port("brief")); RawBolt beating = new RawBolt(gw.port("brief"))) {
            for (int i = 1; i <= 8; i++) { // 1.6 s: well over the 600 ms idle timeout (closed after 600-750 ms)
                beating.write(RawBolt.heartbeat(BoltFraming.V1, i));
                assertThat(beating.read().id()).isEqualTo(i);
                Thread.sleep(200);
            }
            assertThat(quiet.closedByPeer()).as("a connection with no traffic is closed").isTrue();
            beating.write(RawBolt.heartbeat(BoltFraming.V1, 99));
            assertThat(beating.read().id()).as("heartbeats keep a connection open").isEqualTo(99);
        }
    }

    @Test
    void clientHeartbeatsAreAnsweredByTheGateway() throws Exception {
        long before = echo.handled();
        try (RawBolt raw = new RawBolt(gw.port("bolt"))) {
            raw.write(RawBolt.heartbeat(BoltFraming.V1, 42));
            RawBolt.Response ack = raw.read();
            assertThat(ack.protocol()).isEqualTo(1);
            assertThat(ack.cmdCode()).isZero();
            assertThat(ack.id()).isEqualTo(42);
            assertThat(ack.status()).isEqualTo(BoltStatus.SUCCESS);
            raw.write(RawBolt.heartbeat(BoltFraming.V2_VER2_CRC, 43));
            ack = raw.read();
            assertThat(ack.protocol()).isEqualTo(2);
            assertThat(ack.id()).isEqualTo(43);
        }
        assertThat(echo.handled()).isEqualTo(before);
    }

    @Test
    void garbageAndTruncatedFramesCloseOnlyTheirConnection() throws Exception {
        String a = addr("bolt", "");
        assertThat(clientV1.invokeSync(a, "before", 5000)).isEqualTo("before");
        // random garbage: not bolt at all, nothing to answer, the connection closes
        try (RawBolt garbage = new RawBolt(gw.port("bolt"))) {
            byte[] junk = new byte[512];
            new java.util.Random(1).nextBytes(junk);
            junk[0] = 0x07;
            garbage.write(junk);
            assertThat(garbage.closedByPeer()).isTrue();
        }
        // a v2 request with a broken CRC: CODEC_EXCEPTION for its id, then closed
        try (RawBolt badCrc = new RawBolt(gw.port("bolt"))) {
            byte[] frame = RawBolt.stringRequest(BoltFraming.V2_VER2_CRC, 9, "java.lang.String", Map.of(), "crc");
            frame[frame.length - 1] ^= 0x5a;
            badCrc.write(frame);
            RawBolt.Response r = badCrc.read();
            assertThat(r.id()).isEqualTo(9);
            assertThat(r.status()).isEqualTo(BoltStatus.CODEC_EXCEPTION);
            assertThat(r.content()).isNotEmpty();
            assertThat(badCrc.closedByPeer()).isTrue();
        }
        // truncated: half a frame, then the client goes away
        try (RawBolt truncated = new RawBolt(gw.port("bolt"))) {
            byte[] frame = RawBolt.stringRequest(BoltFraming.V1, 11, "java.lang.String", Map.of(), "cut short");
            truncated.write(java.util.Arrays.copyOf(frame, frame.length / 2));
            truncated.shutdownOutput();
            assertThat(truncated.closedByPeer()).isTrue();
        }
        // too large: answered, skipped, and the connection goes on
        try (RawBolt big = new RawBolt(gw.port("bolt"))) {
            int content = 5 << 20;
            java.nio.ByteBuffer header = java.nio.ByteBuffer.allocate(22);
            header.put((byte) 1).put((byte) 1).putShort((short) 1).put((byte) 1).putInt(13).put((byte) 1)
                    .putInt(5000).putShort((short) 0).putShort((short) 0).putInt(content);
            big.write(header.array());
            big.write(new byte[content]);
            RawBolt.Response r = big.read();
            assertThat(r.id()).isEqualTo(13);
            assertThat(r.status()).isEqualTo(BoltStatus.CODEC_EXCEPTION);
            big.write(RawBolt.stringRequest(BoltFraming.V1, 14, "java.lang.String", Map.of(), "still here"));
            r = big.read();
            assertThat(r.id()).isEqualTo(14);
            assertThat(r.text()).endsWith("still here");
        }
        assertThat(clientV1.invokeSync(a, "after", 5000)).isEqualTo("after");
    }
}
