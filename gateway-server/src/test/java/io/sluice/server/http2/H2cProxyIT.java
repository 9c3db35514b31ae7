package io.sluice.server.http2;

import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2Headers;
import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.Http2Options;
import io.sluice.core.config.HttpOptions;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.Protocol;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.RouteMatch;
import io.sluice.core.config.RouteRules;
import io.sluice.core.config.TransportConfig;
import io.sluice.server.Gateway;
import io.sluice.server.testing.GatewayFixture;
import io.sluice.server.testing.Ports;
import io.sluice.server.testing.TestBackend;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Downstream h2c with prior knowledge next to HTTP/1.1 on one port, proxied to a real HTTP/1.1
 * upstream: the RFC 9113 §8 translation both ways, bodies both ways, the gateway's own errors,
 * and gRPC errors as Trailers-Only responses.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class H2cProxyIT {

    private TestBackend backend;
    private Gateway gw;
    private int port;

    @BeforeAll
    void start() throws Exception {
        backend = TestBackend.start();
        int dead = Ports.free();
        ClusterConfig c = ClusterConfig.of("c", List.of(new HostConfig("127.0.0.1", backend.port(), 1)));
        ClusterConfig d = ClusterConfig.of("dead", List.of(new HostConfig("127.0.0.1", dead, 1)));
        HttpOptions http = HttpOptions.builder().http2(Http2Options.builder().h2cUpgrade(true).build()).build();
        ListenerConfig l = ListenerConfig.builder().name("web").protocol(Protocol.AUTO).http(http).routes(
                new RouteConfig("slow", RouteMatch.pathPrefix("/slow.Svc/Call"), "c", "/stall", Duration.ofSeconds(5)),
                new RouteConfig("dead", RouteMatch.pathPrefix("/dead.Svc/"), "dead", null, null),
                new RouteConfig("r", RouteMatch.pathPrefix("/r/"), "c", "/", null),
                new RouteConfig("moved", RouteMatch.pathPrefix("/old/"), null, null, null, null, null, RouteRules.builder()
                        .redirect(new RouteRules.Redirect(null, null, 0, null, "/new/", false, 308, false)).build()),
                new RouteConfig("gone", RouteMatch.pathPrefix("/gone"), null, null, null, null, null, RouteRules.builder()
                        .directResponse(new RouteRules.DirectResponse(410, "gone", null)).build())).build();
        gw = GatewayFixture.start(GatewayConfig.builder().listeners(l).clusters(c, d).admin(AdminConfig.disabled())
                .transport(TransportConfig.builder().workerThreads(1).backlog(128).build())
                .drainTimeout(Duration.ofSeconds(5)).build());
        port = gw.port("web");
    }

    @AfterAll
    void stop() {
        gw.close();
        backend.close();
    }

    @Test
    void priorKnowledgeRequestIsTranslatedForTheHttp11Upstream() throws Exception {
        try (H2TestClient client = new H2TestClient(port)) {
            Http2Headers h = H2TestClient.get("/r/headers?x=1");
            h.add("cookie", "a=1").add("cookie", "b=2").add("te", "trailers").add("x-custom", "v");
            H2TestClient.Response r = client.exchange(h, null);
            assertThat(r.status()).isEqualTo(200);
            String echoed = r.bodyText();
            assertThat(echoed).startsWith("GET /headers?x=1 HTTP/1.1");
            assertThat(echoed).containsIgnoringCase("host: localhost").contains("cookie: a=1; b=2")
                    .contains("x-custom: v").doesNotContainIgnoringCase("te: trailers");
            assertThat(r.header("connection")).isNull();
            assertThat(r.header("transfer-encoding")).isNull();
        }
    }

    @Test
    void routesWithoutAClusterAnswerStreamsThemselves() throws Exception {
        try (H2TestClient client = new H2TestClient(port)) {
            H2TestClient.Response r = client.exchange(H2TestClient.get("/old/a?q=1"), null);
            assertThat(r.status()).isEqualTo(308);
            assertThat(r.header("location")).isEqualTo("http://localhost/new/a?q=1");
            H2TestClient.Response g = client.exchange(H2TestClient.get("/gone"), null);
            assertThat(g.status()).isEqualTo(410);
            assertThat(g.bodyText()).isEqualTo("gone");
            assertThat(g.header("content-length")).isEqualTo("4");
            H2TestClient.Response after = client.exchange(H2TestClient.get("/r/headers"), null);
            assertThat(after.status()).as("the connection goes on").isEqualTo(200);
        }
    }

    @Test
    void requestAndResponseBodiesStreamBothWays() throws Exception {
        byte[] body = new byte[200_000];
        for (int i = 0; i < body.length; i++) {
            body[i] = (byte) ('a' + i % 26);
        }
        try (H2TestClient client = new H2TestClient(port)) {
            H2TestClient.Response r = client.exchange(H2TestClient.post("/r/echo"), body);
            assertThat(r.status()).isEqualTo(200);
            assertThat(r.header("x-request-chunked")).isEqualTo("true"); // no content-length: chunked upstream
            assertThat(r.body.toByteArray()).isEqualTo(body);
            H2TestClient.Response d = client.exchange(H2TestClient.get("/r/download?bytes=1000000"), null);
            assertThat(d.status()).isEqualTo(200);
            assertThat(d.body.size()).isEqualTo(1_000_000);
            assertThat(d.header("content-length")).isEqualTo("1000000");
        }
    }

    @Test
    void expectContinueIsAnsweredByTheGateway() throws Exception {
        try (H2TestClient client = new H2TestClient(port)) {
            H2TestClient.Response r = client.exchange(H2TestClient.post("/r/echo").set("expect", "100-continue"),
                    "body".getBytes(StandardCharsets.US_ASCII));
            assertThat(r.interim).isEqualTo(100);
            assertThat(r.status()).isEqualTo(200);
            assertThat(r.bodyText()).isEqualTo("body");
        }
    }

    @Test
    void manyConcurrentStreamsOnOneConnection() throws Exception {
        try (H2TestClient client = new H2TestClient(port)) {
            H2TestClient.Response[] rs = new H2TestClient.Response[50];
            for (int i = 0; i < rs.length; i++) {
                rs[i] = new H2TestClient.Response();
                client.send(H2TestClient.get("/r/anything" + i), null, rs[i]);
            }
            for (H2TestClient.Response r : rs) {
                r.done.get(10, java.util.concurrent.TimeUnit.SECONDS);
                assertThat(r.status()).isEqualTo(200);
                assertThat(r.bodyText()).isEqualTo("ok from " + backend.port());
            }
        }
    }

    @Test
    void http11StillWorksOnTheSamePort() throws Exception {
        HttpClient c = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        HttpResponse<String> r = c.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/r/x"))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).isEqualTo("ok from " + backend.port());
        assertThat(r.version()).isEqualTo(HttpClient.Version.HTTP_1_1);
    }

    @Test
    void jdkClientUpgradesToH2c() throws Exception {
        HttpClient c = HttpClient.newBuilder().version(HttpClient.Version.HTTP_2).build();
        for (int i = 0; i < 3; i++) {
            HttpResponse<String> r = c.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/r/headers"))
                    .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.version()).isEqualTo(HttpClient.Version.HTTP_2);
            assertThat(r.body()).startsWith("GET /headers HTTP/1.1").doesNotContainIgnoringCase("upgrade")
                    .doesNotContainIgnoringCase("http2-settings");
        }
        HttpResponse<String> post = c.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/r/echo"))
                .POST(HttpRequest.BodyPublishers.ofString("hello h2")).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(post.body()).isEqualTo("hello h2");
    }

    @Test
    void gatewayErrorsAreHttpStatusesForPlainRequests() throws Exception {
        try (H2TestClient client = new H2TestClient(port)) {
            H2TestClient.Response r = client.exchange(H2TestClient.get("/nowhere"), null);
            assertThat(r.status()).isEqualTo(404);
            assertThat(r.bodyText()).contains("no route for GET /nowhere");
            H2TestClient.Response dead = client.exchange(H2TestClient.get("/dead.Svc/x"), null);
            assertThat(dead.status()).isEqualTo(502);
        }
    }

    @Test
    void grpcRequestsGetTrailersOnlyErrors() throws Exception {
        try (H2TestClient client = new H2TestClient(port)) {
            H2TestClient.Response r = client.exchange(grpc("/pkg.Nope/Call"), null);
            assertThat(r.status()).isEqualTo(200);
            assertThat(r.header("grpc-status")).isEqualTo("12");
            assertThat(r.header("content-type")).isEqualTo("application/grpc");
            assertThat(r.body.size()).isZero();
            H2TestClient.Response dead = client.exchange(grpc("/dead.Svc/Call"), null);
            assertThat(dead.header("grpc-status")).isEqualTo("14");
            assertThat(dead.header("grpc-message")).contains("cannot connect to");
        }
    }

    @Test
    void grpcTimeoutIsTheDeadlineCappedByTheRoute() throws Exception {
        try (H2TestClient client = new H2TestClient(port)) {
            Http2Headers h = grpc("/slow.Svc/Call").set("grpc-timeout", "300m");
            long t0 = System.nanoTime();
            H2TestClient.Response r = client.exchange(h, new byte[] {0, 0, 0, 0, 0});
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertThat(r.header("grpc-status")).isEqualTo("4");
            assertThat(ms).isBetween(250L, 4_000L); // the route's 5 s would be later
        }
    }

    @Test
    void connectionSpecificHeaderIsAStreamErrorAndTheConnectionSurvives() throws Exception {
        try (RawH2 c = new RawH2(port)) {
            c.headers(1, true, RawH2.get("/r/x", "connection", "keep-alive"));
            assertThat(c.await(RawH2.RST_STREAM, 1).errorCode()).isEqualTo(Http2Error.PROTOCOL_ERROR.code());
            c.headers(3, true, RawH2.get("/r/x", "te", "gzip"));
            assertThat(c.await(RawH2.RST_STREAM, 3).errorCode()).isEqualTo(Http2Error.PROTOCOL_ERROR.code());
            c.headers(5, true, RawH2.get("/r/x"));
            assertThat(c.await(RawH2.HEADERS, 5)).isNotNull(); // the connection lives on
        }
    }

    @Test
    void upperCaseHeaderNameIsAProtocolError() throws Exception {
        try (RawH2 c = new RawH2(port); H2TestClient other = new H2TestClient(port)) {
            c.headers(1, true, RawH2.get("/r/x", "X-Upper", "1"));
            RawH2.Frame f = c.read();
            while (f != null && f.type() != RawH2.RST_STREAM && f.type() != RawH2.GOAWAY) {
                assertThat(f.type()).as("never proxied").isNotEqualTo(RawH2.HEADERS);
                f = c.read();
            }
            assertThat(f).isNotNull();
            assertThat(f.errorCode()).isEqualTo(Http2Error.PROTOCOL_ERROR.code());
            assertThat(other.exchange(H2TestClient.get("/r/x"), null).status()).isEqualTo(200);
        }
    }

    @Test
    void grpcJavaClientSeesTheGatewaysErrorsAsStatusCodes() throws Exception {
        io.grpc.ManagedChannel ch = io.grpc.Grpc.newChannelBuilderForAddress("127.0.0.1", port,
                io.grpc.InsecureChannelCredentials.create()).build();
        try {
            assertThat(callStatus(ch, "pkg.Nope/Call", 5_000)).isEqualTo(io.grpc.Status.Code.UNIMPLEMENTED);
            assertThat(callStatus(ch, "dead.Svc/Call", 5_000)).isEqualTo(io.grpc.Status.Code.UNAVAILABLE);
            assertThat(callStatus(ch, "slow.Svc/Call", 300)).isEqualTo(io.grpc.Status.Code.DEADLINE_EXCEEDED);
        } finally {
            ch.shutdownNow().awaitTermination(5, java.util.concurrent.TimeUnit.SECONDS);
        }
    }

    /** A unary call of {@code fullMethod} with a byte[] payload; the status it ended with. */
    static io.grpc.Status.Code callStatus(io.grpc.Channel ch, String fullMethod, long deadlineMillis) {
        try {
            io.grpc.stub.ClientCalls.blockingUnaryCall(ch, GrpcBytes.unary(fullMethod),
                    io.grpc.CallOptions.DEFAULT.withDeadlineAfter(deadlineMillis, java.util.concurrent.TimeUnit.MILLISECONDS),
                    new byte[] {1, 2, 3});
            return io.grpc.Status.Code.OK;
        } catch (io.grpc.StatusRuntimeException e) {
            return e.getStatus().getCode();
        }
    }

    private static Http2Headers grpc(String path) {
        return H2TestClient.post(path).set("content-type", "application/grpc").set("te", "trailers");
    }

    static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }
}
