package io.sluice.lb;

import io.sluice.core.cluster.HealthStatus;
import io.sluice.core.cluster.Host;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.HealthCheckConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.SlowStartConfig;
import io.sluice.core.time.ManualScheduler;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

class HealthCheckTest {

    private static final long MS = 1_000_000L;

    private final ManualScheduler clock = new ManualScheduler();
    private final FakeProbe probe = new FakeProbe();
    private final RecordingListener events = new RecordingListener();
    private final LbContext ctx = new LbContext(clock, new SplittableRandom(3))
            .withPrePicks(LbContext.PrePicks.NONE).withProbes(c -> probe).withListener(events);

    private static HealthCheckConfig check(int healthy, int unhealthy, Duration jitter, Duration initialDelay) {
        return HealthCheckConfig.builder().interval(Duration.ofSeconds(1)).timeout(Duration.ofMillis(500))
                .intervalJitter(jitter).initialDelay(initialDelay).healthyThreshold(healthy).unhealthyThreshold(unhealthy)
                .build();
    }

    private ClusterBalancer balancer(HealthCheckConfig hc, String... addresses) {
        List<HostConfig> hosts = new ArrayList<>();
        for (String a : addresses) {
            hosts.add(HostConfig.parse(a, 1));
        }
        return ClusterBalancer.create(ClusterConfig.of("c", hosts).withHealthCheck(hc)
                .withSlowStart(SlowStartConfig.of(Duration.ofSeconds(30))), ctx);
    }

    @Test
    void pureStateMachine() {
        HealthState s = new HealthState(HealthStatus.UNKNOWN, 2, 3);
        assertThat(s.record(true)).isEqualTo(HealthStatus.HEALTHY); // first success: healthy at once
        assertThat(s.record(false)).isNull();
        assertThat(s.record(false)).isNull();
        assertThat(s.record(true)).isNull(); // resets the failure count
        assertThat(s.record(false)).isNull();
        assertThat(s.record(false)).isNull();
        assertThat(s.record(false)).isEqualTo(HealthStatus.UNHEALTHY);
        assertThat(s.record(false)).isNull();
        assertThat(s.record(true)).isNull();
        assertThat(s.record(false)).isNull(); // resets the success count
        assertThat(s.record(true)).isNull();
        assertThat(s.record(true)).isEqualTo(HealthStatus.HEALTHY);
        HealthState unknown = new HealthState(HealthStatus.UNKNOWN, 1, 2);
        assertThat(unknown.record(false)).isNull();
        assertThat(unknown.record(false)).isEqualTo(HealthStatus.UNHEALTHY);
    }

    @Test
    void initialDelayThenFixedDelayWithThresholds() {
        ClusterBalancer b = balancer(check(2, 3, Duration.ZERO, Duration.ofSeconds(2)), "127.0.0.1:1");
        Host h = b.hosts().get(0);
        clock.advanceNanos(1999 * MS);
        assertThat(probe.probes).isZero();
        clock.advanceNanos(MS);
        assertThat(probe.probes).isEqualTo(1);
        assertThat(h.health()).isEqualTo(HealthStatus.HEALTHY);

        probe.set("127.0.0.1:1", FakeProbe.Mode.DOWN);
        clock.advance(Duration.ofSeconds(2));
        assertThat(h.health()).isEqualTo(HealthStatus.HEALTHY); // 2 failures < 3
        clock.advance(Duration.ofSeconds(1));
        assertThat(h.health()).isEqualTo(HealthStatus.UNHEALTHY);
        assertThat(h.warmStartNanos()).isEqualTo(Host.NOT_WARMING);
        assertThat(b.panicking()).isTrue(); // 0 of 1 available < 50 %: panic mode still sends traffic
        assertThat(b.pick()).isSameAs(h);
        probe.set("127.0.0.1:1", FakeProbe.Mode.UP);
        clock.advance(Duration.ofSeconds(1));
        assertThat(h.health()).isEqualTo(HealthStatus.UNHEALTHY); // 1 success < 2
        clock.advance(Duration.ofSeconds(1));
        assertThat(h.health()).isEqualTo(HealthStatus.HEALTHY);
        assertThat(h.warmStartNanos()).isEqualTo(clock.nanoTime()); // warm-up starts on the transition
        assertThat(probe.probes).isEqualTo(6);
        assertThat(events.events).containsExactly(
                "c 127.0.0.1:1 UNKNOWN -> HEALTHY (probe passed)",
                "c 127.0.0.1:1 HEALTHY -> UNHEALTHY (connection refused)",
                "c panic true",
                "c 127.0.0.1:1 UNHEALTHY -> HEALTHY (probe passed)",
                "c panic false");
    }

    @Test
    void timeoutsCountAsFailuresAndLateResultsAreIgnored() {
        ClusterBalancer b = balancer(check(1, 1, Duration.ZERO, Duration.ZERO), "127.0.0.1:1");
        Host h = b.hosts().get(0);
        probe.set("127.0.0.1:1", FakeProbe.Mode.HANG);
        clock.runDue();
        assertThat(probe.held).hasSize(1);
        clock.advanceNanos(499 * MS);
        assertThat(h.health()).isEqualTo(HealthStatus.UNKNOWN);
        clock.advanceNanos(MS); // timeout
        assertThat(h.health()).isEqualTo(HealthStatus.UNHEALTHY);
        assertThat(events.events).containsExactly("c 127.0.0.1:1 UNKNOWN -> UNHEALTHY (timeout after 500ms)", "c panic true");

        probe.held.get(0).succeeded(); // late: attempt 1 already timed out
        assertThat(h.health()).isEqualTo(HealthStatus.UNHEALTHY);

        clock.advance(Duration.ofSeconds(1)); // attempt 2 starts (1 s after the timeout) and hangs
        assertThat(probe.held).hasSize(2);
        probe.held.get(0).succeeded(); // still late
        assertThat(h.health()).isEqualTo(HealthStatus.UNHEALTHY);
        probe.held.get(1).succeeded(); // in time
        assertThat(h.health()).isEqualTo(HealthStatus.HEALTHY);
        probe.held.get(1).failed("duplicate"); // a second answer is ignored
        assertThat(h.health()).isEqualTo(HealthStatus.HEALTHY);
        assertThat(clock.pendingTasks()).isEqualTo(2); // the next probe and the warm-up end; no stale timeout
    }

    @Test
    void jitterStaysWithinItsBound() {
        List<Long> times = new ArrayList<>();
        HealthProbe timed = (host, cb) -> {
            times.add(clock.nanoTime());
            cb.succeeded();
        };
        ClusterBalancer.create(ClusterConfig.of("c", List.of(HostConfig.parse("127.0.0.1:1", 1)))
                .withHealthCheck(check(1, 1, Duration.ofMillis(100), Duration.ZERO)), ctx.withProbes(c -> timed));
        clock.advance(Duration.ofSeconds(60));
        assertThat(times.size()).isBetween(55, 60);
        boolean varied = false;
        for (int i = 1; i < times.size(); i++) {
            long gap = times.get(i) - times.get(i - 1);
            assertThat(gap).isBetween(1000 * MS, 1100 * MS - 1);
            varied |= gap != times.get(1) - times.get(0);
        }
        assertThat(varied).isTrue();
    }

    @Test
    void probesThatThrowFailAndRemovedHostsStopBeingProbed() {
        List<String> probed = new ArrayList<>();
        HealthProbe throwing = (host, cb) -> {
            probed.add(host.address());
            if (host.port() == 2) {
                throw new IllegalStateException("boom");
            }
            cb.succeeded();
        };
        ClusterBalancer b = ClusterBalancer.create(ClusterConfig.of("c", List.of(HostConfig.parse("127.0.0.1:1", 1),
                        HostConfig.parse("127.0.0.1:2", 1))).withHealthCheck(check(1, 1, Duration.ZERO, Duration.ZERO)),
                ctx.withProbes(c -> throwing));
        clock.runDue();
        assertThat(b.hosts().get(1).health()).isEqualTo(HealthStatus.UNHEALTHY);
        assertThat(events.events).anyMatch(e -> e.contains("probe failed: java.lang.IllegalStateException: boom"));
        b.update(b.config().withHosts(List.of(HostConfig.parse("127.0.0.1:1", 1))));
        probed.clear();
        clock.advance(Duration.ofSeconds(5));
        assertThat(probed).containsOnly("127.0.0.1:1").hasSize(5);
        b.close();
        probed.clear();
        clock.advance(Duration.ofSeconds(5));
        assertThat(probed).isEmpty();
    }

    @Test
    void removingTheHealthCheckReleasesUnhealthyHosts() {
        ClusterBalancer b = balancer(check(1, 1, Duration.ZERO, Duration.ZERO), "127.0.0.1:1", "127.0.0.1:2");
        probe.set("127.0.0.1:1", FakeProbe.Mode.DOWN);
        clock.runDue();
        Host h = b.hosts().get(0);
        assertThat(h.health()).isEqualTo(HealthStatus.UNHEALTHY);
        b.update(b.config().withHealthCheck(null));
        assertThat(h.health()).isEqualTo(HealthStatus.UNKNOWN);
        int before = probe.probes;
        clock.advance(Duration.ofSeconds(5));
        assertThat(probe.probes).isEqualTo(before);
    }

    @Test
    void reloadWithSameCheckKeepsTheSchedule() {
        ClusterBalancer b = balancer(check(1, 1, Duration.ZERO, Duration.ofSeconds(1)), "127.0.0.1:1");
        clock.advance(Duration.ofMillis(1500)); // probed once at 1 s, next at 2 s
        assertThat(probe.probes).isEqualTo(1);
        b.update(b.config().withHosts(List.of(HostConfig.parse("127.0.0.1:1", 1), HostConfig.parse("127.0.0.1:2", 1))));
        clock.advance(Duration.ofMillis(500)); // kept host at 2 s; added host waits its initial delay
        assertThat(probe.probes).isEqualTo(2);
        clock.advance(Duration.ofMillis(500));
        assertThat(probe.probes).isEqualTo(3);
    }
}
