package io.sluice.server.http2;

import io.netty.handler.codec.http2.Http2Headers;
import io.sluice.server.Gateway;
import io.sluice.server.config.ConfigLoader;
import io.sluice.server.policy.ScriptedBackend;
import io.sluice.server.testing.TestBackend;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The per-request features of HTTP/1.1 on downstream HTTP/2 streams (h2c prior knowledge, a real
 * Netty HTTP/2 client; one JDK {@code HttpClient} HTTP_2 exchange through the h2c upgrade) proxied to
 * real HTTP/1.1 backends: rate limits (429 + Retry-After, gRPC UNAVAILABLE; the refill on the
 * injected ticker), the {@code max_requests} breaker (503 + the shed header, gRPC UNAVAILABLE),
 * header rules, host and regex rewrites, request ids and traceparent, retries with the body
 * replayed, weighted clusters and hash balancing, and the trace id and attempts in the access log.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(60)
class H2PoliciesIT {

    private static final String TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";

    @TempDir
    static Path dir;
    private final AtomicLong now = new AtomicLong(1_000_000_000L);
    private TestBackend b1;
    private TestBackend b2;
    private ScriptedBackend held;
    private ScriptedBackend resetting;
    private ScriptedBackend busy;
    private io.sluice.server.testing.RecordingBackend shadow;
    private Gateway gw;
    private Path accessLog;

    @BeforeAll
    void start() throws Exception {
        b1 = TestBackend.start();
        b2 = TestBackend.start();
        held = new ScriptedBackend((c, o) -> ScriptedBackend.Action.HOLD_THEN_ECHO);
        resetting = new ScriptedBackend((c, o) -> o % 2 == 0 ? ScriptedBackend.Action.RESET : ScriptedBackend.Action.ECHO_CRC);
        busy = new ScriptedBackend((c, o) -> o % 2 == 0 ? ScriptedBackend.Action.STATUS_503 : ScriptedBackend.Action.ECHO_CRC);
        shadow = new io.sluice.server.testing.RecordingBackend();
        accessLog = dir.resolve("access.log");
        String json = """
                {
                  "listeners": [{"name": "web", "port": 0, "protocol": "auto",
                    "http": {"tracing": {"request_id": true, "echo_request_id": true, "traceparent": true},
                             "http2": {"h2c_upgrade": true}},
                    "routes": [
                      {"name": "limited", "match": {"path": {"prefix": "/limited"}}, "cluster": "c"},
                      {"name": "held", "match": {"path": {"prefix": "/held"}}, "cluster": "held"},
                      {"name": "rules", "match": {"path": {"prefix": "/api/"}}, "cluster": "c",
                       "request_headers": {"set": [{"name": "x-gateway-route", "value": "%%ROUTE_NAME%%"}],
                                           "add": [{"name": "x-trace", "value": "t=%%TRACE_ID%%"}],
                                           "remove": ["x-internal-debug"]},
                       "response_headers": {"set": [{"name": "x-served-by", "value": "%%UPSTREAM_HOST%%"}]},
                       "host_rewrite": "api.internal",
                       "regex_rewrite": {"pattern": "^/api/v[0-9]+/", "substitution": "/"}},
                      {"name": "retry", "match": {"path": {"prefix": "/retry"}}, "cluster": "resetting",
                       "retry_policy": {"retry_on": "reset", "num_retries": 1}},
                      {"name": "retry5", "match": {"path": {"prefix": "/r5"}}, "cluster": "busy",
                       "retry_policy": {"retry_on": "5xx", "num_retries": 1}},
                      {"name": "split", "match": {"path": {"prefix": "/split"}},
                       "weighted_clusters": {"clusters": [{"name": "c", "weight": 1}, {"name": "c2", "weight": 1}]}},
                      {"name": "hash", "match": {"path": {"prefix": "/hash"}}, "cluster": "ring",
                       "hash_policy": [{"header": "x-user"}]},
                      {"name": "mirror", "match": {"path": {"prefix": "/mirror"}}, "cluster": "c",
                       "mirrors": [{"cluster": "shadow", "percent": 100, "timeout": "2s"}]}
                    ]}],
                  "clusters": [
                    {"name": "c", "hosts": ["127.0.0.1:%d"]},
                    {"name": "c2", "hosts": ["127.0.0.1:%d"]},
                    {"name": "ring", "lb": "ring_hash", "hosts": ["127.0.0.1:%d", "127.0.0.1:%d"]},
                    {"name": "held", "hosts": ["127.0.0.1:%d"], "circuit_breakers": {"max_requests": 1}},
                    {"name": "resetting", "hosts": ["127.0.0.1:%d"]},
                    {"name": "busy", "hosts": ["127.0.0.1:%d"]},
                    {"name": "shadow", "hosts": ["127.0.0.1:%d"]}
                  ],
                  "rate_limit": {"rules": [{"name": "two", "routes": ["limited"], "max_tokens": 2, "fill_interval": "10s"}]},
                  "access_log": {"path": "%s", "format": "json"},
                  "admin": {"enabled": false}, "drain_timeout": "200ms",
                  "transport": {"worker_threads": 1}
                }
                """.formatted(b1.port(), b2.port(), b1.port(), b2.port(), held.port(), resetting.port(), busy.port(), shadow.port(),
                accessLog.toString().replace("\\", "\\\\"));
        gw = Gateway.builder().config(ConfigLoader.parse(json, "test").config()).ticker(now::get)
                .random(new SplittableRandom(7)).build().start().orTimeout(30, TimeUnit.SECONDS).join();
    }

    @AfterAll
    void stop() throws Exception {
        if (gw != null) {
            gw.close();
        }
        for (AutoCloseable c : new AutoCloseable[] {b1, b2, held, resetting, busy, shadow}) {
            if (c != null) {
                c.close();
            }
        }
    }

    private H2TestClient client() throws InterruptedException {
        return new H2TestClient(gw.port("web"));
    }

    private static Http2Headers grpc(String path) {
        return H2TestClient.post(path).set("content-type", "application/grpc").set("te", "trailers");
    }

    @Test
    void rateLimitsAnswer429OrGrpcUnavailableAndRefillOnTheInjectedTicker() throws Exception {
        try (H2TestClient c = client()) {
            assertThat(c.exchange(H2TestClient.get("/limited/1"), null).status()).isEqualTo(200);
            assertThat(c.exchange(H2TestClient.get("/limited/2"), null).status()).isEqualTo(200);
            H2TestClient.Response over = c.exchange(H2TestClient.get("/limited/3"), null);
            assertThat(over.status()).isEqualTo(429);
            assertThat(over.header("retry-after")).isEqualTo("10");
            assertThat(over.bodyText()).contains("rate limited on route limited");
            H2TestClient.Response g = c.exchange(grpc("/limited/svc.S/M"), null);
            assertThat(g.status()).as("gRPC: Trailers-Only").isEqualTo(200);
            assertThat(g.header("grpc-status")).isEqualTo("14"); // UNAVAILABLE, Envoy's mapping of 429
            assertThat(g.header("grpc-message")).isEqualTo("rate limited on route limited");
            now.addAndGet(TimeUnit.SECONDS.toNanos(10) - 1);
            assertThat(c.exchange(H2TestClient.get("/limited/4"), null).status()).as("1 ns before the refill").isEqualTo(429);
            now.addAndGet(1);
            assertThat(c.exchange(H2TestClient.get("/limited/5"), null).status()).as("at the refill").isEqualTo(200);
            assertThat(c.exchange(H2TestClient.get("/api/v1/elsewhere"), null).status()).as("other routes untouched").isEqualTo(200);
        }
        assertThat(gw.meterRegistry().get("sluice.ratelimit.requests").tags("rule", "two", "result", "limited")
                .counter().count()).isEqualTo(3);
    }

    @Test
    void theMaxRequestsBreakerShedsWith503OrGrpcUnavailable() throws Exception {
        try (H2TestClient c = client()) {
            H2TestClient.Response first = new H2TestClient.Response();
            c.send(H2TestClient.get("/held/1"), null, first);
            await().atMost(Duration.ofSeconds(10)).until(() -> held.inFlight.get() == 1);
            H2TestClient.Response shed = c.exchange(H2TestClient.get("/held/2"), null);
            assertThat(shed.status()).isEqualTo(503);
            assertThat(shed.header("x-sluice-overloaded")).isEqualTo("true");
            assertThat(shed.bodyText()).contains("cluster held is at its max_requests limit");
            H2TestClient.Response g = c.exchange(grpc("/held/svc.S/M"), null);
            assertThat(g.status()).isEqualTo(200);
            assertThat(g.header("grpc-status")).isEqualTo("14");
            assertThat(g.header("grpc-message")).contains("max_requests");
            held.release.countDown();
            assertThat(first.done.get(10, TimeUnit.SECONDS).status()).isEqualTo(200);
            assertThat(c.exchange(H2TestClient.get("/held/3"), null).status()).as("the slot came back").isEqualTo(200);
        }
        assertThat(gw.meterRegistry().get("sluice.cluster.breaker.remaining").tags("cluster", "held", "resource", "requests")
                .gauge().value()).isEqualTo(1);
    }

    @Test
    void headerRulesRewritesRequestIdsAndTraceContext() throws Exception {
        try (H2TestClient c = client()) {
            Http2Headers h = H2TestClient.get("/api/v2/headers?q=1").set("x-internal-debug", "secret")
                    .set("x-gateway-route", "forged").set("traceparent", "00-" + TRACE + "-00f067aa0ba902b7-01");
            H2TestClient.Response r = c.exchange(h, null);
            assertThat(r.status()).isEqualTo(200);
            String up = r.bodyText();
            assertThat(up).startsWith("GET /headers?q=1 HTTP/1.1"); // regex rewrite, query kept
            assertThat(up).contains("host: api.internal").contains("x-gateway-route: rules\n")
                    .doesNotContain("forged").doesNotContain("x-internal-debug").contains("x-trace: t=" + TRACE);
            assertThat(up).containsPattern("traceparent: 00-" + TRACE + "-[0-9a-f]{16}-01");
            assertThat(up).doesNotContain("00f067aa0ba902b7"); // the gateway's own span
            String id = line(up, "x-request-id");
            assertThat(id).matches("[0-9a-f-]{36}");
            assertThat(r.header("x-request-id")).as("echoed").isEqualTo(id);
            assertThat(r.header("x-served-by")).isEqualTo("127.0.0.1:" + b1.port());
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> Files.exists(accessLog)
                && Files.readString(accessLog).contains("/api/v2/headers?q=1"));
        String line = Files.readAllLines(accessLog).stream().filter(l -> l.contains("/api/v2/headers?q=1")).findFirst().orElseThrow();
        assertThat(line).contains("\"trace_id\":\"" + TRACE + "\"").contains("\"attempts\":1").contains("\"protocol\":\"h2c\"");
    }

    @Test
    void theJdkClientOverTheH2cUpgradeGetsTheRequestIdToo() throws Exception {
        HttpClient jdk = HttpClient.newBuilder().version(HttpClient.Version.HTTP_2).connectTimeout(Duration.ofSeconds(5)).build();
        URI u = URI.create("http://127.0.0.1:" + gw.port("web") + "/api/v1/headers");
        for (int i = 0; i < 2; i++) { // the first is stream 1 of the upgrade, the second a plain HTTP/2 stream
            HttpResponse<String> r = jdk.send(HttpRequest.newBuilder(u).timeout(Duration.ofSeconds(10)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(r.version()).isEqualTo(HttpClient.Version.HTTP_2);
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.headers().firstValue("x-request-id")).hasValue(line(r.body(), "x-request-id"));
            assertThat(r.headers().firstValue("x-served-by")).hasValue("127.0.0.1:" + b1.port());
        }
    }

    @Test
    void aResetIsRetriedWithTheBodyReplayedAndTheAttemptCounted() throws Exception {
        byte[] body = "0123456789".repeat(3000).getBytes(StandardCharsets.US_ASCII);
        try (H2TestClient c = client()) {
            for (int i = 0; i < 2; i++) { // every first request on the backend is reset, its retry echoes
                Http2Headers h = new io.netty.handler.codec.http2.DefaultHttp2Headers().method("PUT").scheme("http")
                        .authority("localhost").path("/retry/doc" + i).setInt("content-length", body.length);
                H2TestClient.Response r = c.exchange(h, body);
                assertThat(r.status()).isEqualTo(200);
                assertThat(r.bodyText()).as("the whole body reached the retry").isEqualTo(ScriptedBackend.crc(body));
            }
        }
        assertThat(resetting.resets.get()).isEqualTo(2);
        assertThat(resetting.retriedHeaders.get()).as("x-sluice-attempt: 2").isEqualTo(2);
        await().atMost(Duration.ofSeconds(10)).until(() -> Files.exists(accessLog)
                && Files.readString(accessLog).contains("/retry/doc1"));
        assertThat(Files.readAllLines(accessLog).stream().filter(l -> l.contains("/retry/doc")))
                .allSatisfy(l -> assertThat(l).contains("\"attempts\":2"));
    }

    @Test
    void a503IsRetriedOn5xx() throws Exception {
        try (H2TestClient c = client()) {
            for (int i = 0; i < 3; i++) {
                H2TestClient.Response r = c.exchange(H2TestClient.get("/r5/" + i), null);
                assertThat(r.status()).isEqualTo(200);
            }
        }
        assertThat(busy.requests.get()).isEqualTo(6);
    }

    @Test
    void weightedClustersAndHashPolicy() throws Exception {
        Map<String, Integer> split = new HashMap<>();
        try (H2TestClient c = client()) {
            for (int i = 0; i < 10; i++) {
                split.merge(c.exchange(H2TestClient.get("/split/" + i), null).bodyText(), 1, Integer::sum);
            }
            assertThat(split).containsOnly(Map.entry("ok from " + b1.port(), 5), Map.entry("ok from " + b2.port(), 5));
            List<String> users = new ArrayList<>();
            for (int u = 0; u < 6; u++) {
                String first = c.exchange(H2TestClient.get("/hash/a").set("x-user", "user" + u), null).bodyText();
                for (int i = 0; i < 4; i++) {
                    assertThat(c.exchange(H2TestClient.get("/hash/b").set("x-user", "user" + u), null).bodyText())
                            .as("user%d stays on one host", u).isEqualTo(first);
                }
                users.add(first);
            }
            assertThat(users).as("the users spread over both hosts")
                    .contains("ok from " + b1.port(), "ok from " + b2.port());
        }
    }

    @Test
    void mirrorsGetACopyOfTheStreamAsHttp11() throws Exception {
        try (H2TestClient c = client()) {
            H2TestClient.Response r = c.exchange(H2TestClient.post("/mirror/echo"), "shadowed body".getBytes(StandardCharsets.US_ASCII));
            assertThat(r.status()).isEqualTo(200);
            assertThat(r.bodyText()).as("the client sees only the primary").isEqualTo("ok from " + b1.port());
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> shadow.requests().stream().anyMatch(q -> q.startsWith("POST /mirror/echo")));
        String copy = shadow.requests().stream().filter(q -> q.startsWith("POST /mirror/echo")).findFirst().orElseThrow();
        assertThat(copy.toLowerCase()).contains("host: localhost-shadow\r\n").contains("connection: close\r\n")
                .contains("transfer-encoding: chunked");
        assertThat(copy).contains("shadowed body");
    }

    private static String line(String echoed, String name) {
        for (String l : echoed.split("\n")) {
            if (l.startsWith(name + ": ")) {
                return l.substring(name.length() + 2);
            }
        }
        return null;
    }
}
