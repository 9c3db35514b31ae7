package io.sluice.server.discovery;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.DiscoveryConfig;
import io.sluice.core.discovery.DiscoveredHost;
import io.sluice.core.discovery.HostSource;
import io.sluice.core.time.ManualScheduler;
import io.sluice.lb.ClusterBalancer;
import io.sluice.lb.LbContext;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code /ready} at start (docs/operations.md): the hub says which discovery clusters have not applied
 * their first host list yet, until {@code initial_fetch_timeout} — exactly, on an injected clock.
 */
class DiscoveryReadinessTest {

    /** A source that publishes only when told. */
    static final class Manual implements HostSource {
        volatile Sink sink;

        @Override
        public void start(Sink s) {
            sink = s;
        }

        @Override
        public void close() {
        }
    }

    private final ManualScheduler clock = new ManualScheduler();
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

    private ClusterBalancer cluster(String name, String source, Duration timeout) {
        return ClusterBalancer.create(ClusterConfig.builder().name(name)
                .discovery(DiscoveryConfig.custom(source).withInitialFetchTimeout(timeout)).build(),
                new LbContext(clock, new SplittableRandom(1)));
    }

    @Test
    void readyWaitsForEveryFirstListUpToItsTimeoutAndThenStaysReady() {
        Manual a = new Manual();
        Manual b = new Manual();
        Map<String, Supplier<HostSource>> sources = Map.of("a", () -> a, "b", () -> b);
        try (DiscoveryHub hub = new DiscoveryHub(meters, sources, () -> 0L, x -> { }, dc -> null).clock(clock::nanoTime)) {
            assertThat(hub.waitingFor()).isNull(); // no discovery cluster: nothing to wait for (not latched yet)
            hub.sync(cluster("alpha", "a", Duration.ofSeconds(5)));
            hub.sync(cluster("beta", "b", Duration.ofSeconds(2)));
            assertThat(hub.waitingFor()).contains("alpha").contains("beta");
            assertThat(meters.get("sluice.discovery.synced").tag("cluster", "alpha").gauge().value()).isZero();

            a.sink.hosts(List.of()); // an empty first list is an answer too
            assertThat(hub.waitingFor()).doesNotContain("alpha").contains("beta");
            assertThat(meters.get("sluice.discovery.synced").tag("cluster", "alpha").gauge().value()).isEqualTo(1.0);

            clock.advanceNanos(Duration.ofSeconds(2).toNanos() - 1);
            assertThat(hub.waitingFor()).contains("beta");
            assertThat(hub.readyWithoutList()).isNull();
            clock.advanceNanos(1); // exactly beta's initial_fetch_timeout
            assertThat(hub.waitingFor()).isNull();
            assertThat(hub.readyWithoutList()).contains("beta").doesNotContain("alpha");

            // latched: a cluster attached later (reload, route by registry) does not make the gateway unready
            hub.sync(cluster("gamma", "a", Duration.ofSeconds(5)));
            assertThat(hub.waitingFor()).isNull();

            b.sink.hosts(List.of(new DiscoveredHost("127.0.0.1", 8080, 100, 0, "b")));
            assertThat(hub.readyWithoutList()).isNull();
        }
    }

    @Test
    void aZeroTimeoutDoesNotWait() {
        Manual a = new Manual();
        try (DiscoveryHub hub = new DiscoveryHub(meters, Map.of("a", () -> a), () -> 0L, x -> { }, dc -> null)
                .clock(clock::nanoTime)) {
            hub.sync(cluster("alpha", "a", Duration.ZERO));
            assertThat(hub.waitingFor()).isNull();
            assertThat(hub.readyWithoutList()).isNull(); // 0 = not waiting is not worth a note
        }
    }
}
