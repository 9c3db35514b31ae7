package io.sluice.server.health;

import io.sluice.core.cluster.HealthStatus;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HealthCheckConfig;
import io.sluice.core.config.HttpOptions;
import io.sluice.core.config.SlowStartConfig;
import io.sluice.server.Gateway;
import io.sluice.server.testing.GatewayFixture;
import io.sluice.server.testing.TestBackend;
import org.junit.jupiter.api.Test;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Slow start end to end, on the real clock with a short window: three backends 1:2:3; the heavy
 * one dies, comes back, and only gets its full share after the window.
 */
class SlowStartIT {

    private final HttpClient client = HttpClient.newHttpClient();

    private Map<String, Integer> count(Gateway g, int n) throws Exception {
        Map<String, Integer> counts = new HashMap<>();
        for (int i = 0; i < n; i++) {
            HttpResponse<String> r = client.send(HttpRequest.newBuilder(GatewayFixture.uri(g, "/x"))
                    .timeout(Duration.ofSeconds(10)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            counts.merge(r.body(), 1, Integer::sum);
        }
        return counts;
    }

    @Test
    void aRecoveredHostRampsUpOverTheWindowThenTakesItsFullShare() throws Exception {
        TestBackend a = TestBackend.start();
        TestBackend b = TestBackend.start();
        TestBackend c = TestBackend.start();
        int portC = c.port();
        GatewayConfig base = GatewayFixture.simple(List.of(GatewayFixture.host(a, 1), GatewayFixture.host(b, 2),
                GatewayFixture.host(c, 3)), HttpOptions.defaults());
        ClusterConfig cluster = base.clusters().get(0)
                .withHealthCheck(HealthCheckConfig.builder().probe(HealthCheckConfig.HTTP).interval(Duration.ofMillis(100))
                        .timeout(Duration.ofMillis(500)).healthyThreshold(1).unhealthyThreshold(1).httpPath("/status/200").build())
                .withSlowStart(new SlowStartConfig(Duration.ofSeconds(3), 1.0, 0.1))
                .withTimeouts(Duration.ofSeconds(2), Duration.ofSeconds(2));
        String heavy = "ok from " + portC;
        try (Gateway g = GatewayFixture.start(base.withClusters(List.of(cluster)))) {
            await().atMost(Duration.ofSeconds(10)).until(() -> g.cluster("c").hosts().stream()
                    .allMatch(h -> h.health() == HealthStatus.HEALTHY));
            // present at boot: warm at once, exact 1:2:3 over whole cycles
            assertThat(count(g, 60)).containsEntry("ok from " + a.port(), 10).containsEntry("ok from " + b.port(), 20)
                    .containsEntry(heavy, 30);

            c.close();
            await().atMost(Duration.ofSeconds(10)).until(() -> g.cluster("c").hosts().get(2).health() == HealthStatus.UNHEALTHY);
            c = TestBackend.start(portC);
            await().atMost(Duration.ofSeconds(10)).until(() -> g.cluster("c").hosts().get(2).health() == HealthStatus.HEALTHY);
            // early in the window (factor floored at 1 s / 3 s) the recovered host gets about 15 of 60, not 30;
            // its parked connections were closed when it failed the health check, so none of these hangs
            assertThat(count(g, 60).getOrDefault(heavy, 0)).isLessThan(20);
            assertThat(g.cluster("c").warmUpFactor(g.cluster("c").hosts().get(2))).isLessThan(1.0);
            await().atMost(Duration.ofSeconds(10)).until(() -> g.cluster("c").warmUpFactor(g.cluster("c").hosts().get(2)) == 1.0);
            int full = count(g, 60).getOrDefault(heavy, 0);
            assertThat(full).isBetween(28, 32);
        } finally {
            a.close();
            b.close();
            c.close();
        }
    }
}
