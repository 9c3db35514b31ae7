package io.sluice.server.tls.upstream;

import io.micrometer.core.instrument.Counter;
import io.sluice.core.cluster.HealthStatus;
import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HealthCheckConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.PoolConfig;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.RouteMatch;
import io.sluice.core.config.TransportConfig;
import io.sluice.core.config.UpstreamTlsConfig;
import io.sluice.server.Gateway;
import io.sluice.server.testing.GatewayFixture;
import io.sluice.server.testing.TestPki;
import io.sluice.server.testing.TlsHttpServer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * TLS from the gateway to real HTTPS upstreams (Netty servers with certificates made by the test):
 * verification against a CA, SNI, pooled reuse, the failure reasons, verification off, mTLS,
 * health probes over TLS and a reload that changes the tls block.
 */
class UpstreamTlsIT {

    @TempDir
    Path dir;

    private TestPki pki;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @BeforeEach
    void pki() {
        pki = TestPki.create(dir, "up");
    }

    private HttpResponse<String> get(Gateway g, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + g.port("web") + path))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static ClusterConfig cluster(String name, TlsHttpServer s, UpstreamTlsConfig tls) {
        return ClusterConfig.builder().name(name).hosts(new HostConfig("127.0.0.1", s.port(), 1)).tls(tls).build();
    }

    /** One listener "web"; cluster i gets the path prefix "/" + its name ("/" for the last). */
    private static GatewayConfig config(List<ClusterConfig> clusters) {
        List<RouteConfig> routes = new ArrayList<>();
        for (int i = 0; i < clusters.size(); i++) {
            String n = clusters.get(i).name();
            routes.add(new RouteConfig(n, i == clusters.size() - 1 ? RouteMatch.ANY : RouteMatch.pathPrefix("/" + n), n, null, null));
        }
        ListenerConfig l = ListenerConfig.builder().name("web").routes(routes).build();
        return GatewayConfig.builder().listeners(l).clusters(clusters).admin(AdminConfig.disabled())
                .transport(TransportConfig.builder().workerThreads(1).backlog(128).build())
                .drainTimeout(Duration.ofSeconds(1)).build();
    }

    private static double handshakes(Gateway g, String cluster, String result, String reason) {
        Counter c = g.meterRegistry().find(UpstreamTls.METER).tags("cluster", cluster, "result", result, "reason", reason).counter();
        return c == null ? 0 : c.count();
    }

    private UpstreamTlsConfig trusting() {
        return UpstreamTlsConfig.builder().caFile(pki.caFile().toString()).build();
    }

    @Test
    void verifiedAgainstTheCaWithSniAndOneHandshakeForSequentialRequests() throws Exception {
        TestPki.Leaf leaf = pki.leaf("server", "api.internal");
        try (TlsHttpServer s = TlsHttpServer.start(leaf, null);
             Gateway g = GatewayFixture.start(config(List.of(cluster("c", s, trusting().toBuilder().sni("api.internal").build()))))) {
            for (int i = 0; i < 5; i++) {
                HttpResponse<String> r = get(g, "/x");
                assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
                assertThat(r.body()).startsWith("tls ok from " + s.port());
            }
            assertThat(s.requests()).isEqualTo(5);
            assertThat(s.handshakes()).as("pooled TLS connection reused").isEqualTo(1);
            assertThat(s.sniNames()).containsExactly("api.internal");
            assertThat(handshakes(g, "c", "success", "ok")).isEqualTo(1);
        }
    }

    @Test
    void newConnectionsResumeTheSessionOfTheClustersContext() throws Exception {
        try (TlsHttpServer s = TlsHttpServer.start(pki.leaf("server", "127.0.0.1"), null);
             Gateway g = GatewayFixture.start(config(List.of(cluster("c", s, trusting().toBuilder()
                     .protocols(List.of(UpstreamTlsConfig.TLS_V1_2)).build()).withPool(PoolConfig.builder().maxIdlePerHost(0).build()))))) {
            for (int i = 0; i < 3; i++) {
                assertThat(get(g, "/x").statusCode()).isEqualTo(200);
            }
            assertThat(s.handshakes()).as("no pooling: a connection per request").isEqualTo(3);
            assertThat(s.resumedHandshakes()).as("the 2nd and 3rd resumed the 1st session").isEqualTo(2);
        }
    }

    @Test
    void aHostByIpAddressNeedsAnIpSanAndSendsNoSni() throws Exception {
        try (TlsHttpServer s = TlsHttpServer.start(pki.leaf("byip", "127.0.0.1"), null);
             Gateway g = GatewayFixture.start(config(List.of(cluster("c", s, trusting()))))) {
            HttpResponse<String> r = get(g, "/x");
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            assertThat(s.sniNames()).isEmpty();
        }
    }

    @Test
    void badCertificatesAre502WithTheReasonAndCounted() throws Exception {
        Instant now = Instant.now();
        TestPki other = TestPki.create(dir, "other");
        try (TlsHttpServer expired = TlsHttpServer.start(pki.leaf("expired", now.minus(Duration.ofDays(10)),
                     now.minus(Duration.ofDays(1)), "127.0.0.1"), null);
             TlsHttpServer future = TlsHttpServer.start(pki.leaf("future", now.plus(Duration.ofDays(1)),
                     now.plus(Duration.ofDays(10)), "127.0.0.1"), null);
             TlsHttpServer wrongHost = TlsHttpServer.start(pki.leaf("wronghost", "elsewhere.example"), null);
             TlsHttpServer unknownCa = TlsHttpServer.start(other.leaf("unknownca", "127.0.0.1"), null);
             Gateway g = GatewayFixture.start(config(List.of(cluster("expired", expired, trusting()),
                     cluster("future", future, trusting()), cluster("wronghost", wrongHost, trusting()),
                     cluster("unknownca", unknownCa, trusting()))))) {
            PrintStream err = System.err;
            ByteArrayOutputStream log = new ByteArrayOutputStream();
            System.setErr(new PrintStream(log, true, StandardCharsets.UTF_8));
            List<HttpResponse<String>> rs = new ArrayList<>();
            try {
                for (String p : List.of("/expired", "/future", "/wronghost", "/unknownca", "/expired")) {
                    rs.add(get(g, p));
                }
            } finally {
                System.setErr(err);
            }
            for (HttpResponse<String> r : rs) {
                assertThat(r.statusCode()).as(r.body()).isEqualTo(502);
            }
            assertThat(rs.get(0).body()).contains("TLS handshake with upstream 127.0.0.1:" + expired.port(), "certificate expired");
            assertThat(rs.get(1).body()).contains("certificate not yet valid");
            assertThat(rs.get(2).body()).contains("certificate does not name 127.0.0.1");
            assertThat(rs.get(3).body()).contains("certificate not signed by a trusted CA");
            assertThat(handshakes(g, "expired", "failure", "expired")).isEqualTo(2);
            assertThat(handshakes(g, "future", "failure", "not_yet_valid")).isEqualTo(1);
            assertThat(handshakes(g, "wronghost", "failure", "wrong_host")).isEqualTo(1);
            assertThat(handshakes(g, "unknownca", "failure", "unknown_ca")).isEqualTo(1);
            String lines = log.toString(StandardCharsets.UTF_8);
            assertThat(lines).contains("[reason=expired]", "[reason=not_yet_valid]", "[reason=wrong_host]", "[reason=unknown_ca]");
            assertThat(lines.split("\\[reason=expired]", -1)).as("one log line for two failures of one host").hasSize(2);
        }
    }

    @Test
    void verifyOffAcceptsAnyCertificateAndSaysSoInTheLog() throws Exception {
        TestPki other = TestPki.create(dir, "other");
        PrintStream err = System.err;
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        try (TlsHttpServer s = TlsHttpServer.start(other.leaf("anything", "nowhere.example"), null)) {
            System.setErr(new PrintStream(log, true, StandardCharsets.UTF_8));
            try (Gateway g = GatewayFixture.start(config(List.of(cluster("c", s, UpstreamTlsConfig.builder().verify(false).build()))))) {
                HttpResponse<String> r = get(g, "/x");
                assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            } finally {
                System.setErr(err);
            }
        }
        assertThat(log.toString(StandardCharsets.UTF_8)).contains("cluster c: upstream TLS certificate verification is OFF");
    }

    @Test
    void mutualTlsToAnUpstreamThatRequiresClientCertificates() throws Exception {
        TestPki clients = TestPki.create(dir, "clients");
        TestPki.Leaf client = clients.leaf("gateway-client", "gateway.internal");
        Path p12 = client.pkcs12("secret");
        try (TlsHttpServer s = TlsHttpServer.start(pki.leaf("mtls", "127.0.0.1"), clients.caFile());
             Gateway g = GatewayFixture.start(config(List.of(
                     cluster("none", s, trusting()),
                     cluster("p12", s, trusting().toBuilder().pkcs12(p12.toString(), "secret").build()),
                     cluster("pem", s, trusting().toBuilder().clientCertificate(client.certFile().toString(),
                             client.keyFile().toString()).build()))))) {
            HttpResponse<String> without = get(g, "/none");
            assertThat(without.statusCode()).as(without.body()).isEqualTo(502);
            assertThat(without.body()).contains("rejected the client certificate");
            HttpResponse<String> pem = get(g, "/pem");
            assertThat(pem.statusCode()).as(pem.body()).isEqualTo(200);
            assertThat(pem.body()).contains("client=CN=gateway.internal");
            HttpResponse<String> pkcs12 = get(g, "/p12");
            assertThat(pkcs12.statusCode()).as(pkcs12.body()).isEqualTo(200);
            assertThat(pkcs12.body()).contains("client=CN=gateway.internal");
        }
    }

    @Test
    void healthProbesSpeakTlsAndFailOnABadCertificate() throws Exception {
        Instant now = Instant.now();
        HealthCheckConfig hc = HealthCheckConfig.builder().probe(HealthCheckConfig.HTTP).httpPath("/health")
                .interval(Duration.ofMillis(100)).timeout(Duration.ofMillis(1000)).healthyThreshold(1).unhealthyThreshold(1).build();
        try (TlsHttpServer good = TlsHttpServer.start(pki.leaf("good", "127.0.0.1"), null);
             TlsHttpServer expired = TlsHttpServer.start(pki.leaf("old", now.minus(Duration.ofDays(10)),
                     now.minus(Duration.ofDays(1)), "127.0.0.1"), null)) {
            ClusterConfig c = ClusterConfig.builder().name("c").tls(trusting()).healthCheck(hc)
                    .hosts(new HostConfig("127.0.0.1", good.port(), 1), new HostConfig("127.0.0.1", expired.port(), 1)).build();
            ClusterConfig tcp = c.toBuilder().name("tcp").healthCheck(hc.toBuilder().probe(HealthCheckConfig.TCP).build()).build();
            try (Gateway g = GatewayFixture.start(config(List.of(tcp, c)))) {
                await().atMost(Duration.ofSeconds(10)).until(() -> g.cluster("c").hosts().get(0).health() == HealthStatus.HEALTHY
                        && g.cluster("c").hosts().get(1).health() == HealthStatus.UNHEALTHY
                        && g.cluster("tcp").hosts().get(0).health() == HealthStatus.HEALTHY
                        && g.cluster("tcp").hosts().get(1).health() == HealthStatus.UNHEALTHY);
                assertThat(good.requests()).isPositive(); // the HTTP probe went through TLS to the good host
                assertThat(handshakes(g, "c", "failure", "expired")).isPositive();
            }
        }
    }

    @Test
    void reloadWithAChangedTlsBlockRebuildsTheContextForNewConnectionsOnly() throws Exception {
        TestPki other = TestPki.create(dir, "other");
        try (TlsHttpServer s = TlsHttpServer.start(pki.leaf("server", "127.0.0.1"), null);
             Gateway g = GatewayFixture.start(config(List.of(cluster("c", s, trusting()))))) {
            assertThat(get(g, "/x").statusCode()).isEqualTo(200);
            UpstreamTlsConfig wrongCa = UpstreamTlsConfig.builder().caFile(other.caFile().toString()).build();
            g.reload(config(List.of(cluster("c", s, wrongCa))));
            HttpResponse<String> reused = get(g, "/x");
            assertThat(reused.statusCode()).as("the open connection is untouched").isEqualTo(200);
            assertThat(s.handshakes()).isEqualTo(1);
            s.closeConnections();
            HttpResponse<String> fresh = get(g, "/x");
            assertThat(fresh.statusCode()).as(fresh.body()).isEqualTo(502);
            assertThat(fresh.body()).contains("certificate not signed by a trusted CA");
            g.reload(config(List.of(cluster("c", s, trusting()))));
            assertThat(get(g, "/x").statusCode()).isEqualTo(200);
        }
    }
}
