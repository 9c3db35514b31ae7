package io.sluice.server.http2;

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
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * h2c upstream connections against a real Netty HTTP/2 server ({@link H2TestUpstream}): the peer's
 * stream limit is honoured without a single refused stream (the codec's count decides, see
 * {@link H2UpstreamPool}), and streams a GOAWAY left out move to a new connection while new streams
 * avoid the draining one.
 */
class H2UpstreamMultiplexIT {

    private static Gateway gateway(int port) {
        ClusterConfig c = ClusterConfig.builder().name("up").hosts(new HostConfig("127.0.0.1", port, 1))
                .upstreamProtocol(UpstreamProtocol.H2C).build();
        return GatewayFixture.start(GatewayConfig.builder()
                .listeners(ListenerConfig.builder().name("web").routes(RouteConfig.to("up")).build())
                .clusters(c).admin(new AdminConfig(true, "127.0.0.1", 0))
                .transport(TransportConfig.builder().workerThreads(1).backlog(128).build())
                .drainTimeout(Duration.ofSeconds(2)).build());
    }

    private static double counter(Gateway gw, String name) {
        return gw.meterRegistry().get(name).tag("cluster", "up").counter().count();
    }

    @Test
    void theUpstreamsStreamLimitIsHonouredWithoutRefusedStreams() throws Exception {
        try (H2TestUpstream up = new H2TestUpstream(1); Gateway gw = gateway(up.port()); H2TestClient client = new H2TestClient(gw.port("web"))) {
            List<H2TestClient.Response> rs = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                H2TestClient.Response r = new H2TestClient.Response();
                if (i % 2 == 0) { // ends on the upstream's END_STREAM: the stream closes in the codec after our callback
                    client.send(H2TestClient.get("/x" + i), null, r);
                } else { // answered before the request ends: our RST_STREAM closes it once written
                    client.send(H2TestClient.post("/early" + i), ("b" + i).getBytes(StandardCharsets.UTF_8), r);
                }
                rs.add(r);
            }
            for (H2TestClient.Response r : rs) {
                assertThat(r.done.get(10, TimeUnit.SECONDS).status()).isEqualTo(200);
            }
            assertThat(up.maxActive.get()).isEqualTo(1); // per connection (a full connection makes the pool open another)
            assertThat(counter(gw, "sluice.upstream.h2.streams.refused")).isZero();
        }
    }

    /** An early answer ends the upstream stream with RST_STREAM: it holds no place under the limit of 1 afterwards. */
    @Test
    void anEarlyAnswerResetsTheRestOfTheRequestAndFreesItsPlace() throws Exception {
        try (H2TestUpstream up = new H2TestUpstream(1); Gateway gw = gateway(up.port()); H2TestClient client = new H2TestClient(gw.port("web"))) {
            H2TestClient.Response early = new H2TestClient.Response();
            client.sendOpen(H2TestClient.post("/early"), early); // the request body never comes
            assertThat(early.done.get(10, TimeUnit.SECONDS).status()).isEqualTo(200);
            await().atMost(Duration.ofSeconds(10)).until(() -> up.resets.get() == 1); // RST_STREAM CANCEL for the rest
            for (int i = 0; i < 3; i++) {
                assertThat(client.exchange(H2TestClient.get("/after" + i), null).bodyText()).startsWith("conn=0 ");
            }
            assertThat(up.connections.get()).isEqualTo(1);
        }
    }

    @Test
    void streamsAGoAwayLeftOutMoveToANewConnectionAndNewStreamsAvoidTheDrainingOne() throws Exception {
        try (H2TestUpstream up = new H2TestUpstream(100); Gateway gw = gateway(up.port()); H2TestClient client = new H2TestClient(gw.port("web"))) {
            H2TestClient.Response held = new H2TestClient.Response();
            client.send(H2TestClient.get("/hold"), null, held); // stream 1 of upstream connection 0
            await().atMost(Duration.ofSeconds(10)).until(() -> up.requests.size() == 1);
            H2TestClient.Response refused = new H2TestClient.Response();
            client.send(H2TestClient.get("/goaway"), null, refused); // stream 3: GOAWAY(last 1), never processed
            assertThat(held.done.get(10, TimeUnit.SECONDS).bodyText()).startsWith("conn=0 ");
            H2TestClient.Response moved = refused.done.get(10, TimeUnit.SECONDS);
            assertThat(moved.status()).isEqualTo(200);
            assertThat(moved.bodyText()).startsWith("conn=1 ");
            // connection 0 is still open but draining: a new stream goes to connection 1
            H2TestClient.Response next = new H2TestClient.Response();
            client.send(H2TestClient.get("/next"), null, next);
            assertThat(next.done.get(10, TimeUnit.SECONDS).bodyText()).startsWith("conn=1 ");
            assertThat(counter(gw, "sluice.upstream.h2.goaway.received")).isEqualTo(1.0);
            assertThat(counter(gw, "sluice.upstream.h2.streams.refused")).isEqualTo(1.0);
            assertThat(counter(gw, "sluice.upstream.h2.streams.moved")).isEqualTo(1.0);
            assertThat(up.connections.get()).isEqualTo(2);
            // and /clusters says it (Prometheus: sluice_upstream_h2_goaway_received_total{cluster="up"} 1.0)
            java.net.http.HttpResponse<String> clusters = java.net.http.HttpClient.newHttpClient().send(
                    java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:" + gw.adminAddress().getPort() + "/clusters"))
                            .timeout(Duration.ofSeconds(10)).build(), java.net.http.HttpResponse.BodyHandlers.ofString());
            assertThat(clusters.body()).containsPattern("\"goaway_received\"\\s*:\\s*1")
                    .containsPattern("\"streams_moved\"\\s*:\\s*1").containsPattern("\"connections\"\\s*:\\s*2");
            java.net.http.HttpResponse<String> metrics = java.net.http.HttpClient.newHttpClient().send(
                    java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:" + gw.adminAddress().getPort() + "/metrics"))
                            .timeout(Duration.ofSeconds(10)).build(), java.net.http.HttpResponse.BodyHandlers.ofString());
            assertThat(metrics.body()).contains("sluice_upstream_h2_goaway_received_total{cluster=\"up\"} 1.0",
                    "sluice_upstream_h2_streams_moved_total{cluster=\"up\"} 1.0", "sluice_upstream_h2_connections{cluster=\"up\"} 2.0");
        }
    }

    /** HTTP/1.1 clients of an h2c cluster get a 502 saying so at once; nothing reaches the host. */
    @Test
    void http1ClientsOfAnHttp2ClusterGetA502SayingSo() throws Exception {
        try (H2TestUpstream up = new H2TestUpstream(100); Gateway gw = gateway(up.port())) {
            java.net.http.HttpResponse<String> r = java.net.http.HttpClient.newBuilder().version(java.net.http.HttpClient.Version.HTTP_1_1)
                    .build().send(java.net.http.HttpRequest.newBuilder(GatewayFixture.uri(gw, "/x")).timeout(Duration.ofSeconds(10)).build(),
                            java.net.http.HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).isEqualTo(502);
            assertThat(r.body()).contains("cluster up speaks HTTP/2 (upstream_protocol h2c)");
            assertThat(up.connections.get()).isZero();
        }
    }

    /** A reload that turns the cluster into {@code h2} (TLS) never sends its streams on the pooled clear-text connection. */
    @Test
    void aReloadToH2DoesNotReuseTheClearTextConnection() throws Exception {
        try (H2TestUpstream up = new H2TestUpstream(100); Gateway gw = gateway(up.port()); H2TestClient client = new H2TestClient(gw.port("web"))) {
            assertThat(client.exchange(H2TestClient.get("/before"), null).status()).isEqualTo(200);
            ClusterConfig tls = ClusterConfig.builder().name("up").hosts(new HostConfig("127.0.0.1", up.port(), 1))
                    .upstreamProtocol(UpstreamProtocol.H2)
                    .tls(io.sluice.core.config.UpstreamTlsConfig.builder().verify(false).build()).build();
            gw.reload(gw.config().toBuilder().clusters(tls).build());
            H2TestClient.Response after = client.exchange(H2TestClient.get("/after"), null);
            assertThat(after.status()).isEqualTo(502); // the host speaks clear text: the TLS handshake fails
            assertThat(after.bodyText()).contains("TLS handshake with upstream");
            assertThat(up.requests).hasSize(1);
        }
    }
}
