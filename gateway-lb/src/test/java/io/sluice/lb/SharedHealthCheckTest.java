package io.sluice.lb;

import io.sluice.core.cluster.HealthStatus;
import io.sluice.core.cluster.Host;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.HealthCheckConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.UpstreamTlsConfig;
import io.sluice.core.time.ManualScheduler;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/** Clusters of one gateway that list the same address with the same health-check settings share one probe. */
class SharedHealthCheckTest {

    private final ManualScheduler clock = new ManualScheduler();
    private final Map<String, Integer> probed = new HashMap<>();
    private final Map<String, Boolean> down = new HashMap<>();
    private final HealthProbe probe = (host, cb) -> {
        probed.merge(host.address(), 1, Integer::sum);
        if (down.getOrDefault(host.address(), false)) {
            cb.failed("connection refused");
        } else {
            cb.succeeded();
        }
    };
    private final RecordingListener events = new RecordingListener();
    private final HealthCheckHub hub = new HealthCheckHub();
    private final LbContext ctx = new LbContext(clock, new SplittableRandom(3)).withPrePicks(LbContext.PrePicks.NONE)
            .withProbes(c -> probe).withListener(events).withHealthChecks(hub);

    private static HealthCheckConfig check(Duration interval) {
        return HealthCheckConfig.builder().interval(interval).timeout(Duration.ofMillis(500))
                .healthyThreshold(1).unhealthyThreshold(1).build();
    }

    private ClusterBalancer cluster(String name, HealthCheckConfig hc, String... addresses) {
        List<HostConfig> hosts = new ArrayList<>();
        for (String a : addresses) {
            hosts.add(HostConfig.parse(a, 1));
        }
        return ClusterBalancer.create(ClusterConfig.of(name, hosts).withHealthCheck(hc), ctx);
    }

    @Test
    void oneProbePerAddressAndSettingsAndEveryClusterSeesTheResult() {
        ClusterBalancer a = cluster("a", check(Duration.ofSeconds(1)), "10.0.0.1:80", "10.0.0.2:80");
        ClusterBalancer b = cluster("b", check(Duration.ofSeconds(1)), "10.0.0.1:80", "10.0.0.3:80");
        ClusterBalancer c = cluster("c", check(Duration.ofSeconds(2)), "10.0.0.1:80"); // other settings: own probe
        assertThat(hub.loops()).isEqualTo(4);
        clock.advance(Duration.ofSeconds(10)); // probes at 0, 1, ..., 10 s
        assertThat(probed).containsEntry("10.0.0.1:80", 11 + 6).containsEntry("10.0.0.2:80", 11)
                .containsEntry("10.0.0.3:80", 11);

        down.put("10.0.0.1:80", true);
        clock.advance(Duration.ofSeconds(1));
        Host inA = a.hosts().get(0);
        Host inB = b.hosts().get(0);
        assertThat(inA).isNotSameAs(inB);
        assertThat(inA.health()).isEqualTo(HealthStatus.UNHEALTHY);
        assertThat(inB.health()).isEqualTo(HealthStatus.UNHEALTHY);
        assertThat(c.hosts().get(0).health()).isEqualTo(HealthStatus.HEALTHY); // its probe runs at 12 s
        assertThat(events.events).contains(
                "a 10.0.0.1:80 HEALTHY -> UNHEALTHY (connection refused)",
                "b 10.0.0.1:80 HEALTHY -> UNHEALTHY (connection refused)");
        assertThat(b.pick().address()).isEqualTo("10.0.0.3:80");

        // a cluster added later joins the running loop and takes its state at once, without a probe
        int before = probed.get("10.0.0.1:80");
        ClusterBalancer d = cluster("d", check(Duration.ofSeconds(1)), "10.0.0.1:80", "10.0.0.4:80");
        assertThat(d.hosts().get(0).health()).isEqualTo(HealthStatus.UNHEALTHY);
        assertThat(probed.get("10.0.0.1:80")).isEqualTo(before);
        assertThat(events.events).contains("d 10.0.0.1:80 UNKNOWN -> UNHEALTHY (shared health check of 10.0.0.1:80)");

        // the loop outlives the cluster that started it, and stops with its last subscriber
        a.close();
        d.close();
        down.put("10.0.0.1:80", false);
        clock.advance(Duration.ofSeconds(1));
        assertThat(inB.health()).isEqualTo(HealthStatus.HEALTHY);
        assertThat(inA.health()).isEqualTo(HealthStatus.UNHEALTHY); // closed: no longer told
        b.close();
        c.close();
        assertThat(hub.loops()).isZero();
        int total = probed.values().stream().mapToInt(Integer::intValue).sum();
        clock.advance(Duration.ofSeconds(10));
        assertThat(probed.values().stream().mapToInt(Integer::intValue).sum()).isEqualTo(total);
        assertThat(clock.pendingTasks()).isZero();
    }

    @Test
    void clustersThatReachAnAddressOverTlsAndInPlainTextDoNotShareAProbe() {
        ClusterBalancer plain = cluster("plain", check(Duration.ofSeconds(1)), "10.0.0.1:80");
        ClusterBalancer tls = ClusterBalancer.create(ClusterConfig.of("tls", List.of(HostConfig.parse("10.0.0.1:80", 1)))
                .withHealthCheck(check(Duration.ofSeconds(1))).withTls(UpstreamTlsConfig.defaults()), ctx);
        assertThat(hub.loops()).isEqualTo(2);
        // a reload that turns TLS on moves the host to the TLS loop
        plain.update(plain.config().withTls(UpstreamTlsConfig.defaults()));
        assertThat(hub.loops()).isEqualTo(1);
        plain.close();
        tls.close();
        assertThat(hub.loops()).isZero();
    }

    @Test
    void reloadKeepsTheSharedStateOfKeptHosts() {
        ClusterBalancer a = cluster("a", check(Duration.ofSeconds(1)), "10.0.0.1:80", "10.0.0.2:80");
        ClusterBalancer b = cluster("b", check(Duration.ofSeconds(1)), "10.0.0.1:80");
        down.put("10.0.0.1:80", true);
        clock.runDue();
        Host kept = a.hosts().get(0);
        assertThat(kept.health()).isEqualTo(HealthStatus.UNHEALTHY);

        // a reload that changes a's settings moves its hosts to their own loops, keeping their state
        a.update(a.config().withHealthCheck(check(Duration.ofSeconds(3))));
        assertThat(a.hosts().get(0)).isSameAs(kept);
        assertThat(kept.health()).isEqualTo(HealthStatus.UNHEALTHY);
        assertThat(hub.loops()).isEqualTo(3); // b's 1 s loop, a's two 3 s loops
        int before = probed.get("10.0.0.1:80");
        down.put("10.0.0.1:80", false);
        clock.advance(Duration.ofSeconds(3)); // b's loop at 1, 2, 3 s; a's new loop at 0 (initial delay) and 3 s
        assertThat(probed.get("10.0.0.1:80") - before).isEqualTo(5);
        assertThat(b.hosts().get(0).health()).isEqualTo(HealthStatus.HEALTHY);
        assertThat(kept.health()).isEqualTo(HealthStatus.HEALTHY);
        assertThat(kept.warmStartNanos()).isEqualTo(Host.NOT_WARMING); // no slow start configured
    }
}
