package io.sluice.lb;

import io.sluice.core.cluster.HealthStatus;
import io.sluice.core.cluster.Host;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.time.ManualScheduler;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

class ClusterBalancerTest {

    private final LbContext ctx = new LbContext(new ManualScheduler(), new SplittableRandom(1));

    @Test
    void skipsUnavailableHostsAndReturnsNullWhenNoneIsLeft() {
        ClusterConfig c = ClusterConfig.of("c", List.of(
                HostConfig.parse("127.0.0.1:1", 1), HostConfig.parse("127.0.0.1:2", 1)));
        // panic threshold 0: never balance over unavailable hosts
        ClusterBalancer b = ClusterBalancer.create(new ClusterConfig(c.name(), c.protocol(), c.lb(), c.hosts(),
                null, null, null, null, null, null, 0, false, 2, 1.0), ctx);
        Host first = b.hosts().get(0);
        first.health(HealthStatus.UNHEALTHY);
        for (int i = 0; i < 5; i++) {
            assertThat(b.pick()).isSameAs(b.hosts().get(1));
        }
        b.hosts().get(1).eject(Long.MAX_VALUE);
        assertThat(b.pick()).isNull();
    }

    @Test
    void reloadKeepsTheStateOfKeptAddresses() {
        ClusterBalancer b = ClusterBalancer.create(ClusterConfig.of("c", List.of(HostConfig.parse("127.0.0.1:1", 1))), ctx);
        Host kept = b.hosts().get(0);
        kept.health(HealthStatus.UNHEALTHY);
        b.update(ClusterConfig.of("c", List.of(HostConfig.parse("127.0.0.1:1", 5), HostConfig.parse("127.0.0.1:2", 1))));
        assertThat(b.hosts().get(0)).isSameAs(kept);
        assertThat(kept.weight()).isEqualTo(5);
        assertThat(kept.health()).isEqualTo(HealthStatus.UNHEALTHY);
        assertThat(b.hosts()).hasSize(2);
    }
}
