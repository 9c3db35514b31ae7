package io.sluice.server.discovery;

import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.DiscoveryConfig;
import io.sluice.core.config.Protocol;
import io.sluice.core.time.ManualScheduler;
import io.sluice.lb.ClusterBalancer;
import io.sluice.lb.LbContext;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Route by registry: clusters per service on first use, the bound, and idle expiry on a fake clock. */
class RegistryRouterTest {

    private final ManualScheduler clock = new ManualScheduler();
    private final List<ClusterConfig> built = new ArrayList<>();
    private final List<String> retired = new ArrayList<>();
    private final List<Runnable> queued = new ArrayList<>();

    private RegistryRouter router(int max, Duration idle) {
        ClusterConfig template = ClusterConfig.builder().name("registry").protocol(Protocol.BOLT)
                .discovery(DiscoveryConfig.zookeeper("127.0.0.1:2181", "*").withServiceLimits(max, idle)).build();
        return new RegistryRouter(template, c -> {
            built.add(c);
            return ClusterBalancer.create(c, LbContext.of(clock));
        }, b -> retired.add(b.name()), queued::add, clock);
    }

    private void runQueued() {
        List<Runnable> now = new ArrayList<>(queued);
        queued.clear();
        now.forEach(Runnable::run);
    }

    @Test
    void aServiceGetsItsClusterOnFirstUseVersionsShareIt() {
        RegistryRouter r = router(8, Duration.ofMinutes(10));
        assertThat(r.child("com.example.A:1.0")).isNull(); // being discovered
        assertThat(r.child("com.example.A:1.0")).isNull();
        assertThat(queued).hasSize(1); // one build, however many requests come meanwhile
        runQueued();
        ClusterBalancer a = r.child("com.example.A:1.0");
        assertThat(a).isNotNull();
        assertThat(a.name()).isEqualTo("registry/com.example.A");
        assertThat(a.config().discovery().service()).isEqualTo("com.example.A:1.0");
        assertThat(r.child("com.example.A:2.0")).isSameAs(a); // the registry has no versions
        assertThat(r.child("com.example.A:1.0:u1")).isNull(); // another uniqueId: another cluster
        runQueued();
        assertThat(r.child("com.example.A:1.0:u1").name()).isEqualTo("registry/com.example.A:u1");
        assertThat(r.child("not a service")).isNull();
        assertThat(queued).isEmpty();
    }

    @Test
    void atMostMaxServicesAndIdleOnesAreDropped() {
        RegistryRouter r = router(2, Duration.ofSeconds(60));
        r.child("a.A:1.0");
        r.child("b.B:1.0");
        r.child("c.C:1.0"); // over the limit: not even queued
        assertThat(queued).hasSize(2);
        runQueued();
        assertThat(r.services()).containsExactlyInAnyOrder("a.A", "b.B");
        assertThat(r.child("c.C:1.0")).isNull();
        assertThat(queued).isEmpty();

        clock.advance(Duration.ofSeconds(30));
        r.child("a.A:1.0"); // used at 30 s
        clock.advance(Duration.ofMillis(29_999));
        assertThat(r.expireIdle()).isZero(); // b unused for 59.999 s
        clock.advance(Duration.ofMillis(1));
        assertThat(r.expireIdle()).isOne();
        assertThat(retired).containsExactly("registry/b.B");
        assertThat(r.services()).containsExactly("a.A");
        // room again
        assertThat(r.child("c.C:1.0")).isNull();
        runQueued();
        assertThat(r.child("c.C:1.0")).isNotNull();
        r.close();
        assertThat(retired).containsExactlyInAnyOrder("registry/b.B", "registry/a.A", "registry/c.C");
    }
}
