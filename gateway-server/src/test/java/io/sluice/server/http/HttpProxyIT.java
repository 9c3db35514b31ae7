package io.sluice.server.http;

import io.sluice.core.cluster.HealthStatus;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HttpOptions;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.RouteMatch;
import io.sluice.server.Gateway;
import io.sluice.server.metrics.RequestOutcome;
import io.sluice.server.testing.GatewayFixture;
import io.sluice.server.testing.RawClient;
import io.sluice.server.testing.TestBackend;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static io.sluice.server.testing.GatewayFixture.uri;
import static org.assertj.core.api.Assertions.assertThat;

/** The HTTP/1.1 proxy end to end: JDK HttpClient or raw sockets → gateway → real Netty backends, on loopback. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HttpProxyIT {

    private TestBackend a;
    private TestBackend b;
    private Gateway gw;
    private HttpClient client;

    @BeforeAll
    void start() throws Exception {
        a = TestBackend.start();
        b = TestBackend.start();
        HttpOptions options = HttpOptions.builder().maxInitialLineLength(1024).maxHeaderSize(4096).maxRequestBodyBytes(1 << 20)
                .idleTimeout(Duration.ofSeconds(30)).requestHeaderTimeout(Duration.ofMillis(500)).build();
        // a short response timeout on the /stall route only: the rest of the suite must not turn
        // into 504s when a loaded 2-core CI machine is slow to answer
        GatewayConfig base = GatewayFixture.simple(List.of(GatewayFixture.host(a, 1), GatewayFixture.host(b, 1)), options);
        ListenerConfig web = base.listeners().get(0);
        gw = GatewayFixture.start(base.withListeners(List.of(web.withRoutes(List.of(
                new RouteConfig("stall", RouteMatch.pathPrefix("/stall"), "c", null, Duration.ofMillis(400)),
                RouteConfig.to("c"))))));
        client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
    }

    @AfterAll
    void stop() {
        gw.close();
        a.close();
        b.close();
    }

    private HttpResponse<String> get(String path) throws Exception {
        return client.send(HttpRequest.newBuilder(uri(gw, path)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void proxiesAndBalancesAcrossHosts() throws Exception {
        List<String> bodies = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            HttpResponse<String> r = get("/hello");
            assertThat(r.statusCode()).isEqualTo(200);
            bodies.add(r.body());
        }
        assertThat(bodies).contains("ok from " + a.port(), "ok from " + b.port());
    }

    @Test
    void reusesUpstreamConnectionsAcrossRequests() throws Exception {
        get("/warm");
        get("/warm");
        int before = a.connections() + b.connections();
        for (int i = 0; i < 50; i++) {
            assertThat(get("/again").statusCode()).isEqualTo(200);
        }
        // one worker loop, sequential requests: the parked connections carry all 50
        assertThat(a.connections() + b.connections()).isEqualTo(before);
    }

    @Test
    void rewritesHeadersForTheUpstreamHop() throws Exception {
        try (RawClient c = new RawClient(gw.port("web"))) {
            RawClient.Response r = c.send("GET /headers HTTP/1.1\r\nHost: shop.example.com:8080\r\n"
                    + "Connection: keep-alive, X-Secret\r\nX-Secret: s\r\nKeep-Alive: timeout=5\r\n"
                    + "X-Forwarded-For: 10.0.0.1\r\nTE: trailers\r\nProxy-Connection: keep-alive\r\n\r\n").read();
            assertThat(r.status()).isEqualTo(200);
            assertThat(r.body())
                    .startsWith("GET /headers HTTP/1.1\n")
                    .contains("host: shop.example.com:8080\n")
                    .contains("x-forwarded-for: 127.0.0.1\n").doesNotContain("10.0.0.1") // the client is no trusted proxy
                    .contains("x-forwarded-proto: http\n")
                    .contains("x-forwarded-host: shop.example.com:8080\n")
                    .doesNotContain("x-secret").doesNotContain("keep-alive").doesNotContain("te:")
                    .doesNotContain("proxy-connection");
        }
    }

    @Test
    void streamsChunkedBodiesBothWays() throws Exception {
        byte[] payload = new byte[300_000];
        for (int i = 0; i < payload.length; i++) {
            payload[i] = TestBackend.pattern(i);
        }
        HttpRequest req = HttpRequest.newBuilder(uri(gw, "/echo"))
                .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(payload)))
                .timeout(Duration.ofSeconds(10)).build();
        HttpResponse<byte[]> r = client.send(req, HttpResponse.BodyHandlers.ofByteArray());
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("x-request-chunked")).contains("true");
        assertThat(r.headers().firstValue("transfer-encoding")).contains("chunked");
        assertThat(r.body()).isEqualTo(payload);
    }

    @Test
    void aBackendsOwn404IsPassedThrough() throws Exception {
        // the suite's table routes everything: this 404 is the backend's (empty body), not the router's
        HttpResponse<String> r = get("/status/404");
        assertThat(r.statusCode()).isEqualTo(404);
        assertThat(r.body()).isEmpty();
    }

    @Test
    void aRequestNoRouteMatchesGetsTheGatewaysOwn404AndNoBackendIsAsked() throws Exception {
        try (TestBackend only = TestBackend.start()) {
            GatewayConfig base = GatewayFixture.simple(only);
            ListenerConfig web = base.listeners().get(0);
            try (Gateway g = GatewayFixture.start(base.withListeners(List.of(web.withRoutes(List.of(
                    new RouteConfig("api", RouteMatch.pathPrefix("/api/"), "c", null, Duration.ofSeconds(10)))))))) {
                HttpResponse<String> r = client.send(HttpRequest.newBuilder(uri(g, "/elsewhere?x=1"))
                        .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
                assertThat(r.statusCode()).isEqualTo(404);
                assertThat(r.body()).contains("no route for GET /elsewhere on host 127.0.0.1:" + g.port("web"));
                assertThat(only.requests()).as("requests the backend got").isZero();
                double noRoute = g.meterRegistry().find("sluice.requests").tags("listener", "web", "outcome", "no_route")
                        .counters().stream().mapToDouble(io.micrometer.core.instrument.Counter::count).sum();
                assertThat(noRoute).isEqualTo(1);

                // the route that does match reaches the backend
                assertThat(client.send(HttpRequest.newBuilder(uri(g, "/api/x")).timeout(Duration.ofSeconds(10)).build(),
                        HttpResponse.BodyHandlers.ofString()).body()).isEqualTo("ok from " + only.port());
                assertThat(only.requests()).isEqualTo(1);
            }
        }
    }

    @Test
    void headAnd204And304HaveNoBody() throws Exception {
        try (RawClient c = new RawClient(gw.port("web"))) {
            RawClient.Response head = c.send("HEAD /download?bytes=1000 HTTP/1.1\r\nHost: x\r\n\r\n").readHead();
            assertThat(head.status()).isEqualTo(200);
            assertThat(head.hasHeader("content-length: 1000")).isTrue();
            RawClient.Response noContent = c.send("GET /status/204 HTTP/1.1\r\nHost: x\r\n\r\n").read();
            assertThat(noContent.status()).isEqualTo(204);
            RawClient.Response notModified = c.send("GET /status/304 HTTP/1.1\r\nHost: x\r\n\r\n").read();
            assertThat(notModified.status()).isEqualTo(304);
            // the connection is still in sync: a normal request after them works
            assertThat(c.send("GET /x HTTP/1.1\r\nHost: x\r\n\r\n").read().body()).startsWith("ok from ");
        }
    }

    @Test
    void http10ClientsGetAClosedOrKeptConnectionAsTheyAsk() throws Exception {
        try (RawClient c = new RawClient(gw.port("web"))) {
            RawClient.Response r = c.send("GET /x HTTP/1.0\r\n\r\n").read();
            assertThat(r.status()).isEqualTo(200);
            assertThat(r.hasHeader("connection: close")).isTrue();
            assertThat(c.closedByPeer()).isTrue();
        }
        try (RawClient c = new RawClient(gw.port("web"))) {
            RawClient.Response r = c.send("GET /x HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").read();
            assertThat(r.hasHeader("connection: keep-alive")).isTrue();
            // a chunked upstream body cannot be chunked to a 1.0 client: raw bytes, then close
            RawClient.Response d = c.send("GET /download?bytes=5000&chunked=1 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").read();
            assertThat(d.chunked()).isFalse();
            assertThat(d.body()).hasSize(5000);
            assertThat(d.hasHeader("connection: close")).isTrue();
        }
    }

    @Test
    void connectionCloseFromTheClientIsHonoured() throws Exception {
        try (RawClient c = new RawClient(gw.port("web"))) {
            RawClient.Response r = c.send("GET /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").read();
            assertThat(r.status()).isEqualTo(200);
            assertThat(r.hasHeader("connection: close")).isTrue();
            assertThat(c.closedByPeer()).isTrue();
        }
    }

    @Test
    void expectContinueIsAnsweredAndTheBodyForwarded() throws Exception {
        try (RawClient c = new RawClient(gw.port("web"))) {
            c.send("POST /count HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n");
            RawClient.Response cont = c.read();
            assertThat(cont.status()).isEqualTo(100);
            RawClient.Response r = c.send("hello").read();
            assertThat(r.status()).isEqualTo(200);
            assertThat(r.body()).startsWith("bytes=5 ");
        }
    }

    @Test
    void pipelinedRequestsAreAnsweredInOrder() throws Exception {
        try (RawClient c = new RawClient(gw.port("web"))) {
            c.send("GET /headers HTTP/1.1\r\nHost: one\r\n\r\nGET /headers HTTP/1.1\r\nHost: two\r\n\r\n");
            assertThat(c.read().body()).contains("host: one");
            assertThat(c.read().body()).contains("host: two");
        }
    }

    @Test
    void stoppedBackendGives502() throws Exception {
        TestBackend gone = TestBackend.start();
        int port = gone.port();
        gone.close();
        try (Gateway g = GatewayFixture.start(GatewayFixture.simple(
                List.of(new io.sluice.core.config.HostConfig("127.0.0.1", port, 1)), HttpOptions.defaults()))) {
            HttpResponse<String> r = client.send(HttpRequest.newBuilder(uri(g, "/"))
                    .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).isEqualTo(502);
            assertThat(r.body()).contains("cannot connect to 127.0.0.1:" + port);
        }
    }

    @Test
    void resetBeforeResponseGives502() throws Exception {
        HttpResponse<String> r = get("/reset");
        assertThat(r.statusCode()).isEqualTo(502);
        assertThat(r.body()).contains("closed the connection before responding");
    }

    @Test
    void stallingBackendGives504AfterTheRouteTimeout() throws Exception {
        double before = timeouts();
        HttpResponse<String> r = get("/stall");
        assertThat(r.statusCode()).isEqualTo(504);
        assertThat(r.body()).contains("did not respond within 400 ms");
        assertThat(timeouts()).isEqualTo(before + 1);
    }

    private double timeouts() {
        return gw.meterRegistry().find("sluice.requests").tag("outcome", RequestOutcome.UPSTREAM_TIMEOUT.tag())
                .counters().stream().mapToDouble(c -> c.count()).sum();
    }

    @Test
    void oversizedHeadersGive431AndOtherConnectionsCarryOn() throws Exception {
        try (RawClient bad = new RawClient(gw.port("web")); RawClient good = new RawClient(gw.port("web"))) {
            good.send("GET /x HTTP/1.1\r\nHost: x\r\n\r\n").read();
            RawClient.Response r = bad.send("GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + "a".repeat(5000) + "\r\n\r\n").read();
            assertThat(r.status()).isEqualTo(431);
            assertThat(r.body()).contains("request headers exceed 4096 bytes");
            assertThat(bad.closedByPeer()).isTrue();
            assertThat(good.send("GET /x HTTP/1.1\r\nHost: x\r\n\r\n").read().status()).isEqualTo(200);
        }
    }

    @Test
    void longRequestLineGives414() throws Exception {
        try (RawClient c = new RawClient(gw.port("web"))) {
            assertThat(c.send("GET /" + "a".repeat(2000) + " HTTP/1.1\r\nHost: x\r\n\r\n").read().status()).isEqualTo(414);
        }
    }

    @Test
    void malformedRequestGives400() throws Exception {
        try (RawClient c = new RawClient(gw.port("web"))) {
            RawClient.Response r = c.send("this is not http\r\n\r\n").read();
            assertThat(r.status()).isEqualTo(400);
            assertThat(c.closedByPeer()).isTrue();
        }
        try (RawClient c = new RawClient(gw.port("web"))) {
            assertThat(c.send("GET / HTTP/1.1\r\n\r\n").read().body()).contains("missing Host header");
        }
    }

    @Test
    void smugglingAttemptsAreRefusedAndNeverReachTheUpstream() throws Exception {
        int before = a.requests() + b.requests();
        String[] attacks = {
                // CL.TE: a front end trusting Content-Length would pass the rest on as a second request
                "POST /count HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nG",
                "POST /count HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n\r\n",
                "POST /count HTTP/1.1\r\nHost: x\r\nContent-Length : 5\r\n\r\nhello",
                "POST /count HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
                "GET /x HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n",
        };
        for (String attack : attacks) {
            try (RawClient c = new RawClient(gw.port("web"))) {
                RawClient.Response r = c.send(attack).read();
                assertThat(r.status()).as(attack).isEqualTo(400);
                assertThat(c.closedByPeer()).isTrue();
            }
        }
        assertThat(a.requests() + b.requests()).isEqualTo(before);
        // a body that turns malformed half-way: the head went upstream already; the client gets a 400
        try (RawClient c = new RawClient(gw.port("web"))) {
            RawClient.Response r = c.send("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + "5\r\nhello\r\nnot-hex\r\n").read();
            assertThat(r.status()).isEqualTo(400);
            assertThat(r.body()).contains("malformed chunk size");
        }
    }

    @Test
    void chunkedBodiesAndTrailersAreForwardedByteForByte() throws Exception {
        try (RawClient c = new RawClient(gw.port("web"))) {
            RawClient.Response r = c.send("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + "3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\n\r\n").read();
            assertThat(r.status()).isEqualTo(200);
            assertThat(r.body()).isEqualTo("abcde");
        }
    }

    @Test
    void bodyOverTheLimitGives413() throws Exception {
        try (RawClient c = new RawClient(gw.port("web"))) {
            RawClient.Response r = c.send("POST /count HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000\r\n\r\n").read();
            assertThat(r.status()).isEqualTo(413);
            assertThat(r.body()).contains("exceeds the limit of 1048576");
        }
        // chunked: discovered while streaming
        byte[] big = new byte[1_500_000];
        HttpRequest req = HttpRequest.newBuilder(uri(gw, "/count"))
                .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(big)))
                .timeout(Duration.ofSeconds(10)).build();
        try {
            assertThat(client.send(req, HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(413);
        } catch (java.io.IOException closedWhileSending) {
            // the gateway answered 413 and closed while the client was still sending: also correct
        }
    }

    @Test
    void slowlorisHeadTimesOutWith408() throws Exception {
        try (RawClient c = new RawClient(gw.port("web"))) {
            c.send("GET / HTTP/1.1\r\nHost: x\r\n");
            RawClient.Response r = c.read(); // the head never completes; the gateway answers after 500 ms
            assertThat(r.status()).isEqualTo(408);
            assertThat(c.closedByPeer()).isTrue();
        }
    }

    @Test
    void noHealthyHostGives503WithoutPanicModeAndIsTriedAnywayInPanicMode() throws Exception {
        TestBackend only = TestBackend.start();
        GatewayConfig base = GatewayFixture.simple(only);
        ClusterConfig c = base.clusters().get(0);
        ClusterConfig noPanic = c.toBuilder().panicThreshold(0).build();
        try (Gateway g = GatewayFixture.start(base.withClusters(List.of(noPanic)))) {
            g.cluster("c").hosts().get(0).health(HealthStatus.UNHEALTHY);
            HttpResponse<String> r = client.send(HttpRequest.newBuilder(uri(g, "/"))
                    .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).isEqualTo(503);
            assertThat(r.body()).contains("no healthy host in cluster c");
        }
        try (Gateway g = GatewayFixture.start(base)) {
            // default panic threshold 50%: with no available host the balancer uses all hosts
            g.cluster("c").hosts().get(0).health(HealthStatus.UNHEALTHY);
            HttpResponse<String> r = client.send(HttpRequest.newBuilder(uri(g, "/"))
                    .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).isEqualTo(200);
        } finally {
            only.close();
        }
    }

    @Test
    void concurrentClientsAllGetTheirOwnAnswers() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(16);
        try {
            List<Future<Integer>> results = new ArrayList<>();
            for (int t = 0; t < 16; t++) {
                results.add(pool.submit(() -> {
                    int ok = 0;
                    for (int i = 0; i < 25; i++) {
                        byte[] body = ("client payload " + i).getBytes();
                        HttpResponse<String> r = client.send(HttpRequest.newBuilder(uri(gw, "/count"))
                                .POST(HttpRequest.BodyPublishers.ofByteArray(body))
                                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
                        if (r.statusCode() == 200 && r.body().startsWith("bytes=" + body.length + " ")) {
                            ok++;
                        }
                    }
                    return ok;
                }));
            }
            int total = 0;
            for (Future<Integer> f : results) {
                total += f.get(60, TimeUnit.SECONDS);
            }
            assertThat(total).isEqualTo(16 * 25);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void staleParkedConnectionIsRetriedOnceForIdempotentRequestsOnly() throws Exception {
        TestBackend only = TestBackend.start();
        try (Gateway g = GatewayFixture.start(GatewayFixture.simple(only))) {
            HttpResponse<String> first = client.send(HttpRequest.newBuilder(uri(g, "/flaky"))
                    .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(first.statusCode()).isEqualTo(200);
            // the parked connection dies when reused: a GET is retried on a fresh connection
            HttpResponse<String> second = client.send(HttpRequest.newBuilder(uri(g, "/flaky"))
                    .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(second.statusCode()).isEqualTo(200);
            assertThat(only.connections()).isEqualTo(2);
            // a POST with a body is not replayed
            HttpResponse<String> post = client.send(HttpRequest.newBuilder(uri(g, "/flaky"))
                    .POST(HttpRequest.BodyPublishers.ofString("x"))
                    .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(post.statusCode()).isEqualTo(502);
        } finally {
            only.close();
        }
    }

    @Test
    void clientVanishingMidResponseFreesTheExchange() throws Exception {
        CompletableFuture<HttpResponse<InputStream>> f = client.sendAsync(
                HttpRequest.newBuilder(uri(gw, "/download?bytes=20000000"))
                        .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofInputStream());
        InputStream in = f.get(30, TimeUnit.SECONDS).body();
        in.readNBytes(100_000);
        in.close();
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> gw.activeRequests() == 0);
    }
}
