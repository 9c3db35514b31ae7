package io.sluice.lb;

import io.sluice.core.cluster.Host;
import io.sluice.core.config.ClusterConfig;
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
 * The picker caches warming weights and refreshes them on the cluster's warm-up grid (a thousandth
 * of the window, at least 10 ms): with traffic flowing while the clock moves, the warming host's
 * share still follows the curve, and the grid task stops when nothing warms up any more.
 */
class WarmUpGridTest {

    private final ManualScheduler clock = new ManualScheduler();
    private final LbContext ctx = new LbContext(clock, new SplittableRandom(1)).withPrePicks(LbContext.PrePicks.NONE);

    @Test
    void aWarmingHostsShareFollowsTheCurveWhileTimeMovesPickByPick() {
        ClusterConfig c = ClusterConfig.of("c", List.of(HostConfig.parse("10.0.0.1:80", 1), HostConfig.parse("10.0.0.2:80", 1)))
                .withSlowStart(SlowStartConfig.of(Duration.ofSeconds(10)));
        ClusterBalancer b = ClusterBalancer.create(c, ctx);
        b.update(c.withHosts(List.of(HostConfig.parse("10.0.0.1:80", 1), HostConfig.parse("10.0.0.2:80", 1),
                HostConfig.parse("10.0.0.3:80", 1)))); // the new host warms up from now
        Host warming = b.hosts().get(2);
        assertThat(clock.pendingTasks()).isEqualTo(1); // the grid task

        for (int second = 0; second < 10; second++) {
            int mine = 0;
            for (int k = 0; k < 2000; k++) { // 2000 picks per second, 0.5 ms apart
                if (b.pick() == warming) {
                    mine++;
                }
                clock.advanceNanos(500_000);
            }
            // factor max(0.1, max(1 s, t) / 10 s): averaged over the second, share f / (2 + f)
            double f0 = Math.max(0.1, Math.max(1, second) / 10.0);
            double f1 = Math.max(0.1, (second + 1) / 10.0);
            double expected = (f0 / (2 + f0) + f1 / (2 + f1)) / 2;
            assertThat(mine / 2000.0).as("share in second %d", second).isCloseTo(expected, within(0.02));
        }
        assertThat(warming.warmStartNanos()).isEqualTo(Host.NOT_WARMING);
        assertThat(clock.pendingTasks()).isZero(); // nothing warms: the grid task stopped
        int[] counts = Counts.batch(b, 300);
        assertThat(counts).containsExactly(100, 100, 100);
    }
}
