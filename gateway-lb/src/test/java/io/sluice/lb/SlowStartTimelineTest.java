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
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * The slow-start scenario of docs/examples/slow-start.md on a fake clock: 8080/8081/8082 with weights 1:2:3, a 30 s
 * window, checks every second with thresholds 1/1, 100 picks per batch. Observed with 0 pre-picks:
 * 17/33/50, 33/67/0, then 25/49/26, 21/43/36, 18/36/46, 17/33/50; the slow-start formula evaluated
 * exactly gives 25/50/25, 21/42/37, 18/36/46, 17/33/50, and the test accepts ±1 per host.
 */
class SlowStartTimelineTest {

    private static final long S = 1_000_000_000L;

    private final ManualScheduler clock = new ManualScheduler();
    private final FakeProbe probe = new FakeProbe();
    private final RecordingListener events = new RecordingListener();

    private ClusterBalancer balancer() {
        HealthCheckConfig hc = HealthCheckConfig.builder().probe(HealthCheckConfig.HTTP).interval(Duration.ofSeconds(1))
                .timeout(Duration.ofSeconds(1)).healthyThreshold(1).unhealthyThreshold(1).build();
        ClusterConfig c = ClusterConfig.of("demo", List.of(HostConfig.parse("127.0.0.1:8080", 1),
                        HostConfig.parse("127.0.0.1:8081", 2), HostConfig.parse("127.0.0.1:8082", 3)))
                .withSlowStart(SlowStartConfig.of(Duration.ofSeconds(30)))
                .withHealthCheck(hc);
        LbContext ctx = new LbContext(clock, new SplittableRandom(7)).withPrePicks(LbContext.PrePicks.NONE)
                .withProbes(cluster -> probe).withListener(events);
        return ClusterBalancer.create(c, ctx);
    }

    private void at(long t0, double seconds) {
        clock.advanceNanos(t0 + (long) (seconds * S) - clock.nanoTime());
    }

    private static void assertBatch(int[] actual, int a, int b, int c) {
        assertThat(actual[0]).as("8080 of %s", List.of(actual[0], actual[1], actual[2])).isBetween(a - 1, a + 1);
        assertThat(actual[1]).as("8081 of %s", List.of(actual[0], actual[1], actual[2])).isBetween(b - 1, b + 1);
        assertThat(actual[2]).as("8082 of %s", List.of(actual[0], actual[1], actual[2])).isBetween(c - 1, c + 1);
        assertThat(actual[0] + actual[1] + actual[2]).isEqualTo(100);
    }

    @Test
    void killRestartAndRampUp() {
        ClusterBalancer b = balancer();
        clock.runDue();
        Host h8082 = b.hosts().get(2);
        assertThat(b.hosts()).allMatch(h -> h.health() == HealthStatus.HEALTHY);
        assertThat(b.warmUpFactor(h8082)).isEqualTo(1.0); // boot hosts start warm

        // 1. all up: exactly 17/33/50 from a fresh scheduler with no pre-picks
        assertThat(Counts.batch(b, 100)).containsExactly(17, 33, 50);

        // 2. 8082 killed: flagged by the next check, then skipped
        probe.set("127.0.0.1:8082", FakeProbe.Mode.DOWN);
        clock.advance(Duration.ofSeconds(1));
        assertThat(h8082.health()).isEqualTo(HealthStatus.UNHEALTHY);
        assertBatch(Counts.batch(b, 100), 33, 67, 0);

        // 3. restarted: the next passing check clears it and starts the warm-up
        probe.set("127.0.0.1:8082", FakeProbe.Mode.UP);
        clock.advance(Duration.ofSeconds(1));
        assertThat(h8082.health()).isEqualTo(HealthStatus.HEALTHY);
        long t0 = h8082.warmStartNanos();
        assertThat(t0).isEqualTo(clock.nanoTime());
        assertThat(b.warmUpFactor(h8082)).isEqualTo(0.1);
        assertThat(b.effectiveWeight(h8082)).isCloseTo(0.3, within(1e-12));

        // 4. the ramp
        at(t0, 10);
        // weights 1:2:1. MOSN re-queues a skipped host with its full weight and gets exactly 25/50/25;
        // we re-queue it with min(w, 1) so a heavy unhealthy host cannot starve others, which moves
        // the recovering host's phase slightly: this run gives 25/49/26. We accept ±1 per host.
        assertBatch(Counts.batch(b, 100), 25, 50, 25);
        at(t0, 17.5);
        assertBatch(Counts.batch(b, 100), 21, 42, 37);
        at(t0, 26);
        assertBatch(Counts.batch(b, 100), 18, 36, 46);
        at(t0, 34);
        assertThat(h8082.warmStartNanos()).isEqualTo(Host.NOT_WARMING);
        assertThat(Counts.batch(b, 100)).containsExactly(17, 33, 50);

        assertThat(events.events).contains(
                "demo 127.0.0.1:8082 HEALTHY -> UNHEALTHY (connection refused)",
                "demo 127.0.0.1:8082 UNHEALTHY -> HEALTHY (probe passed)");
        assertThat(b.panicking()).isFalse();
        b.close();
    }
}
