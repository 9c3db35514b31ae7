package io.sluice.server.health;

import io.sluice.core.cluster.HealthStatus;
import io.sluice.core.cluster.Host;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HealthCheckConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.HttpOptions;
import io.sluice.core.config.Protocol;
import io.sluice.core.config.StatusRange;
import io.sluice.server.Gateway;
import io.sluice.server.demo.DemoBoltBackend;
import io.sluice.server.testing.GatewayFixture;
import io.sluice.server.testing.TestBackend;
import org.junit.jupiter.api.Test;

import java.net.ServerSocket;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** Active health checks with the real Netty probes against real backends, through the running gateway. */
class HealthCheckIT {

    private static HealthCheckConfig fast(String probe, String path, List<StatusRange> expected) {
        return HealthCheckConfig.builder().probe(probe).interval(Duration.ofMillis(100)).timeout(Duration.ofMillis(500))
                .healthyThreshold(1).unhealthyThreshold(1).httpPath(path).expectedStatuses(expected).build();
    }

    private static HealthStatus health(Gateway g, String cluster, int i) {
        return g.cluster(cluster).hosts().get(i).health();
    }

    @Test
    void httpProbeTakesADeadHostOutOfRotationAndTrafficCarriesOn() throws Exception {
        TestBackend a = TestBackend.start();
        TestBackend b = TestBackend.start();
        GatewayConfig base = GatewayFixture.simple(List.of(GatewayFixture.host(a, 1), GatewayFixture.host(b, 1)), HttpOptions.defaults());
        ClusterConfig c = base.clusters().get(0).withHealthCheck(fast(HealthCheckConfig.HTTP, "/status/204",
                List.of(new StatusRange(204, 204))));
        try (Gateway g = GatewayFixture.start(base.withClusters(List.of(c)))) {
            await().atMost(Duration.ofSeconds(10)).until(() -> health(g, "c", 0) == HealthStatus.HEALTHY
                    && health(g, "c", 1) == HealthStatus.HEALTHY);
            b.close();
            await().atMost(Duration.ofSeconds(10)).until(() -> health(g, "c", 1) == HealthStatus.UNHEALTHY);
            HttpClient client = HttpClient.newHttpClient();
            for (int i = 0; i < 20; i++) {
                HttpResponse<String> r = client.send(HttpRequest.newBuilder(GatewayFixture.uri(g, "/x"))
                        .timeout(Duration.ofSeconds(10)).build(),
                        HttpResponse.BodyHandlers.ofString());
                assertThat(r.statusCode()).isEqualTo(200);
                assertThat(r.body()).isEqualTo("ok from " + a.port());
            }
            assertThat(g.meterRegistry().find("sluice.cluster.health.transitions").tag("to", "unhealthy").counter().count())
                    .isEqualTo(1);
            assertThat(g.meterRegistry().find("sluice.cluster.hosts.available").tag("cluster", "c").gauge().value())
                    .isEqualTo(1);
        } finally {
            a.close();
        }
    }

    @Test
    void httpProbeFailsOnAnUnexpectedStatus() throws Exception {
        try (TestBackend a = TestBackend.start()) {
            GatewayConfig base = GatewayFixture.simple(a);
            ClusterConfig c = base.clusters().get(0).withHealthCheck(fast(HealthCheckConfig.HTTP, "/status/503", null));
            try (Gateway g = GatewayFixture.start(base.withClusters(List.of(c)))) {
                await().atMost(Duration.ofSeconds(10)).until(() -> health(g, "c", 0) == HealthStatus.UNHEALTHY);
            }
        }
    }

    @Test
    void tcpProbeFindsAClosedPortAndBoltProbeGetsAHeartbeatAck() throws Exception {
        int closed;
        try (ServerSocket s = new ServerSocket(0)) {
            closed = s.getLocalPort();
        }
        DemoBoltBackend bolt = DemoBoltBackend.start("127.0.0.1", 0);
        try (TestBackend a = TestBackend.start()) {
            GatewayConfig base = GatewayFixture.simple(a);
            ClusterConfig tcp = ClusterConfig.of("tcp", List.of(new HostConfig("127.0.0.1", closed, 1),
                    new HostConfig("127.0.0.1", a.port(), 1))).withHealthCheck(fast(HealthCheckConfig.TCP, null, null));
            ClusterConfig b = ClusterConfig.builder().name("rpc").protocol(Protocol.BOLT)
                    .hosts(new HostConfig("127.0.0.1", bolt.port(), 1)).healthCheck(fast(HealthCheckConfig.BOLT, null, null)).build();
            try (Gateway g = GatewayFixture.start(base.withClusters(List.of(base.clusters().get(0), tcp, b)))) {
                await().atMost(Duration.ofSeconds(10)).until(() -> health(g, "tcp", 0) == HealthStatus.UNHEALTHY
                        && health(g, "tcp", 1) == HealthStatus.HEALTHY && health(g, "rpc", 0) == HealthStatus.HEALTHY);
                Host h = g.cluster("rpc").hosts().get(0);
                assertThat(h.available()).isTrue();
                assertThat(bolt.handled()).isZero(); // heartbeats are not requests
            }
        } finally {
            bolt.close();
        }
    }

    @Test
    void aBackendListedByTwoClustersWithTheSameCheckIsProbedOnce() throws Exception {
        Duration interval = Duration.ofMillis(200);
        HealthCheckConfig hc = HealthCheckConfig.builder().probe(HealthCheckConfig.HTTP).interval(interval)
                .timeout(Duration.ofMillis(500)).healthyThreshold(1).unhealthyThreshold(1).httpPath("/status/204")
                .expectedStatuses(List.of(new StatusRange(204, 204))).build();
        TestBackend shared = TestBackend.start();
        boolean sharedClosed = false;
        try (TestBackend other = TestBackend.start()) {
            GatewayConfig base = GatewayFixture.simple(shared);
            ClusterConfig c = base.clusters().get(0).withHealthCheck(hc);
            ClusterConfig d = ClusterConfig.of("d", List.of(GatewayFixture.host(shared, 1), GatewayFixture.host(other, 1)))
                    .withHealthCheck(hc);
            try (Gateway g = GatewayFixture.start(base.withClusters(List.of(c, d)))) {
                await().atMost(Duration.ofSeconds(10)).until(() -> health(g, "c", 0) == HealthStatus.HEALTHY
                        && health(g, "d", 0) == HealthStatus.HEALTHY && health(g, "d", 1) == HealthStatus.HEALTHY);
                // nothing but probes reach the backends: one loop for the shared address makes at most one
                // request per interval (fixed delay), where two loops would make two
                int probes = 8;
                int n0 = shared.requests();
                long t0 = System.nanoTime();
                await().atMost(Duration.ofSeconds(10)).until(() -> shared.requests() >= n0 + probes);
                long elapsedMs = (System.nanoTime() - t0) / 1_000_000;
                assertThat(elapsedMs).as("%d probes of the shared backend", probes)
                        .isGreaterThanOrEqualTo((probes - 1) * interval.toMillis());
                assertThat(other.requests()).isGreaterThan(0);

                shared.close();
                sharedClosed = true;
                await().atMost(Duration.ofSeconds(10)).until(() -> health(g, "c", 0) == HealthStatus.UNHEALTHY
                        && health(g, "d", 0) == HealthStatus.UNHEALTHY);
                assertThat(health(g, "d", 1)).isEqualTo(HealthStatus.HEALTHY);
                assertThat(g.meterRegistry().find("sluice.cluster.health.transitions").tag("to", "unhealthy")
                        .counters()).hasSize(2); // one per cluster: c and d each report their host
            }
        } finally {
            if (!sharedClosed) {
                shared.close();
            }
        }
    }
}
