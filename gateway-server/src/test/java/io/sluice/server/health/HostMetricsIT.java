package io.sluice.server.health;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HttpOptions;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.SlowStartConfig;
import io.sluice.server.Gateway;
import io.sluice.server.testing.GatewayFixture;
import io.sluice.server.testing.TestBackend;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Per-host gauges in the Prometheus scrape: effective weight, warm-up factor, health, ejection; reloads add and remove them. */
class HostMetricsIT {

    private static String line(String scrape, String meter, String host) {
        return scrape.lines().filter(l -> l.startsWith(meter + "{") && l.contains("host=\"" + host + "\""))
                .findFirst().orElse(null);
    }

    @Test
    void everyHostHasItsGaugesAndAReloadRemovesThoseOfRemovedHosts() throws Exception {
        try (TestBackend a = TestBackend.start(); TestBackend b = TestBackend.start(); TestBackend c = TestBackend.start()) {
            String ha = "127.0.0.1:" + a.port();
            String hb = "127.0.0.1:" + b.port();
            String hc = "127.0.0.1:" + c.port();
            GatewayConfig base = GatewayFixture.simple(List.of(GatewayFixture.host(a, 1), GatewayFixture.host(b, 3)),
                    HttpOptions.defaults());
            ClusterConfig slow = base.clusters().get(0).withSlowStart(SlowStartConfig.of(Duration.ofMinutes(10)));
            try (Gateway g = GatewayFixture.start(base.withClusters(List.of(slow)))) {
                PrometheusMeterRegistry prom = (PrometheusMeterRegistry) g.meterRegistry();
                String s = prom.scrape();
                assertThat(line(s, "sluice_upstream_host_effective_weight", hb))
                        .isEqualTo("sluice_upstream_host_effective_weight{cluster=\"c\",host=\"" + hb + "\"} 3.0");
                assertThat(line(s, "sluice_upstream_host_effective_weight", ha)).endsWith("} 1.0");
                assertThat(line(s, "sluice_upstream_host_warmup_factor", hb)).endsWith("} 1.0"); // boot hosts start warm
                assertThat(line(s, "sluice_upstream_host_healthy", ha)).endsWith("} 1.0");
                assertThat(line(s, "sluice_upstream_host_ejected", ha)).endsWith("} 0.0");

                // reload: b leaves, c joins with weight 4 and warms up (10 min window: the 10 % floor for now)
                g.reload(base.withClusters(List.of(slow.withHosts(List.of(GatewayFixture.host(a, 1),
                        GatewayFixture.host(c, 4))))));
                s = prom.scrape();
                for (String meter : List.of("sluice_upstream_host_effective_weight", "sluice_upstream_host_warmup_factor",
                        "sluice_upstream_host_healthy", "sluice_upstream_host_ejected")) {
                    assertThat(line(s, meter, hb)).as(meter + " of the removed host").isNull();
                    assertThat(line(s, meter, ha)).as(meter + " of the kept host").isNotNull();
                    assertThat(line(s, meter, hc)).as(meter + " of the added host").isNotNull();
                }
                assertThat(line(s, "sluice_upstream_host_warmup_factor", hc)).endsWith("} 0.1");
                assertThat(line(s, "sluice_upstream_host_effective_weight", hc)).endsWith("} 0.4");
                assertThat(line(s, "sluice_upstream_host_warmup_factor", ha)).endsWith("} 1.0");

                // the cluster removed: all its host meters go
                ClusterConfig other = ClusterConfig.of("c2", List.of(GatewayFixture.host(a, 1)));
                g.reload(new GatewayConfig(List.of(base.listeners().get(0).withRoutes(List.of(RouteConfig.to("c2")))),
                        List.of(other), base.admin(), base.transport(), base.drainTimeout()));
                s = prom.scrape();
                assertThat(s).doesNotContain("cluster=\"c\",host=");
                assertThat(line(s, "sluice_upstream_host_effective_weight", ha)).contains("cluster=\"c2\"");
            }
        }
    }
}
