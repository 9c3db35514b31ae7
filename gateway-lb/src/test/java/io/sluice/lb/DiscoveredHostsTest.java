package io.sluice.lb;

import io.sluice.core.cluster.Host;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.DiscoveryConfig;
import io.sluice.core.config.SlowStartConfig;
import io.sluice.core.discovery.DiscoveredHost;
import io.sluice.core.time.ManualScheduler;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * Hosts published by a discovery source: registry weights (unclamped), weight 0 left out, warm-up T0
 * from the provider's start time (wall clock), flap grace, reloads keeping the discovered set. All on
 * an injected clock: the ticker is a {@link ManualScheduler}, the wall clock a number the test moves.
 */
class DiscoveredHostsTest {

    private static final long WALL0 = 1_795_544_939_528L;

    private final ManualScheduler clock = new ManualScheduler();
    private final LbContext ctx = new LbContext(clock, new SplittableRandom(1)).withPrePicks(LbContext.PrePicks.NONE);
    private long wall = WALL0;

    private static ClusterConfig cluster(Duration window) {
        return ClusterConfig.builder().name("echo")
                .slowStart(window == null ? null : new SlowStartConfig(window, 1.0, 0.10))
                .discovery(DiscoveryConfig.zookeeper("127.0.0.1:2181", "com.example.EchoService:1.0")
                        .withFlapGrace(Duration.ofSeconds(30)))
                .build();
    }

    private void advanceSeconds(double s) {
        clock.advanceNanos((long) (s * 1e9));
        wall += (long) (s * 1000);
    }

    private static DiscoveredHost provider(int port, int weight, long startMillis) {
        return new DiscoveredHost("127.0.0.1", port, weight, startMillis, "zookeeper");
    }

    private static Host host(ClusterBalancer b, int port) {
        return b.hosts().stream().filter(h -> h.port() == port).findFirst().orElse(null);
    }

    @Test
    void registryWeightsAreNotClampedTo128AndWeightZeroGetsNoTraffic() {
        ClusterBalancer b = ClusterBalancer.create(cluster(null), ctx);
        b.applyDiscovered(List.of(provider(1, 200, 0), provider(2, 100, 0), provider(3, 0, 0)), wall);
        assertThat(b.hosts()).extracting(Host::port).containsExactly(1, 2);
        assertThat(b.effectiveWeight(host(b, 1))).isEqualTo(200.0);
        assertThat(host(b, 1).origin()).isEqualTo("zookeeper");
        int[] c = Counts.batch(b, 3000);
        assertThat(c[0]).isBetween(1999, 2001);
        assertThat(c[1]).isBetween(999, 1001);

        // the weight changes in the registry: the ratio follows, the Host object (and its state) stays
        Host kept = host(b, 1);
        b.applyDiscovered(List.of(provider(1, 300, 0), provider(2, 100, 0)), wall);
        assertThat(host(b, 1)).isSameAs(kept);
        c = Counts.batch(b, 4000);
        assertThat(c[0]).isBetween(2999, 3001);
    }

    @Test
    void warmUpFollowsTheProvidersStartTimeOnTheFormula() {
        // window 60 s, aggression 1, min 10 %: 3 s -> 10 (floor), 15 s -> 25, 30 s -> 50, 45 s -> 75, 60 s -> 100
        ClusterBalancer b = ClusterBalancer.create(cluster(Duration.ofSeconds(60)), ctx);
        long start = wall - 3_000; // the provider started 3 s ago by its own clock
        b.applyDiscovered(List.of(provider(1, 100, start), provider(2, 100, wall - 3_600_000)), wall);
        Host h = host(b, 1);
        assertThat(b.effectiveWeight(host(b, 2))).isEqualTo(100.0); // up for an hour: warm at once
        assertThat(b.effectiveWeight(h)).isCloseTo(10.0, within(0.01));
        advanceSeconds(12);
        assertThat(b.effectiveWeight(h)).isCloseTo(25.0, within(0.01));
        advanceSeconds(15);
        assertThat(b.effectiveWeight(h)).isCloseTo(50.0, within(0.01));
        // a re-publication of the same provider (any other change in the list) does not restart it
        b.applyDiscovered(List.of(provider(1, 100, start), provider(2, 100, wall - 3_600_000), provider(3, 100, wall - 3_600_000)), wall);
        assertThat(b.effectiveWeight(h)).isCloseTo(50.0, within(0.01));
        advanceSeconds(15);
        assertThat(b.effectiveWeight(h)).isCloseTo(75.0, within(0.01));
        advanceSeconds(15);
        clock.runDue();
        assertThat(b.effectiveWeight(h)).isEqualTo(100.0);
        assertThat(h.warmStartNanos()).isEqualTo(Host.NOT_WARMING);
    }

    @Test
    void twoGatewaysRampAProviderIdenticallyWhateverTheyFirstSawIt() {
        long start = wall;
        ClusterBalancer early = ClusterBalancer.create(cluster(Duration.ofSeconds(60)), ctx);
        early.applyDiscovered(List.of(provider(1, 100, start)), wall);
        advanceSeconds(30);
        ManualScheduler other = new ManualScheduler(987_654_321L); // another process: another ticker origin
        ClusterBalancer late = ClusterBalancer.create(cluster(Duration.ofSeconds(60)),
                new LbContext(other, new SplittableRandom(2)));
        late.applyDiscovered(List.of(provider(1, 100, start)), wall); // sees it 30 s after the first
        assertThat(late.effectiveWeight(late.hosts().get(0)))
                .isCloseTo(early.effectiveWeight(early.hosts().get(0)), within(0.01))
                .isCloseTo(50.0, within(0.01));
    }

    @Test
    void aRestartedProviderWarmsUpAgainAndAClockAheadCountsAsNow() {
        ClusterBalancer b = ClusterBalancer.create(cluster(Duration.ofSeconds(60)), ctx);
        b.applyDiscovered(List.of(provider(1, 100, wall - 3_600_000)), wall);
        Host h = host(b, 1);
        assertThat(b.effectiveWeight(h)).isEqualTo(100.0);
        b.applyDiscovered(List.of(provider(1, 100, wall + 5_000)), wall); // new startTime, 5 s in our future
        assertThat(host(b, 1)).isSameAs(h);
        assertThat(b.effectiveWeight(h)).isCloseTo(10.0, within(0.01)); // elapsed 0 (not negative): the 10 % floor
        advanceSeconds(30);
        assertThat(b.effectiveWeight(h)).isCloseTo(50.0, within(0.01));
    }

    @Test
    void aFlapShorterThanTheGraceKeepsTheWarmUpClockWithoutAStartTime() {
        ClusterBalancer b = ClusterBalancer.create(cluster(Duration.ofSeconds(60)), ctx);
        b.applyDiscovered(List.of(provider(1, 100, 0), provider(2, 100, 0)), wall);
        advanceSeconds(30);
        assertThat(b.effectiveWeight(host(b, 1))).isCloseTo(50.0, within(0.01));
        b.applyDiscovered(List.of(provider(2, 100, 0)), wall); // 1 flaps away ...
        advanceSeconds(10);
        b.applyDiscovered(List.of(provider(1, 100, 0), provider(2, 100, 0)), wall); // ... and back within 30 s
        assertThat(b.effectiveWeight(host(b, 1))).isCloseTo(100.0 * 40 / 60, within(0.01));
        // gone longer than the grace: starts cold
        b.applyDiscovered(List.of(provider(2, 100, 0)), wall);
        advanceSeconds(31);
        b.applyDiscovered(List.of(provider(1, 100, 0), provider(2, 100, 0)), wall);
        assertThat(b.effectiveWeight(host(b, 1))).isCloseTo(10.0, within(0.01));
    }

    @Test
    void healthAndEjectionStillApplyAndSurviveRepublication() {
        ClusterBalancer b = ClusterBalancer.create(cluster(null).toBuilder().panicThreshold(0).build(), ctx);
        b.applyDiscovered(List.of(provider(1, 100, 0), provider(2, 100, 0)), wall);
        host(b, 1).health(io.sluice.core.cluster.HealthStatus.UNHEALTHY);
        host(b, 2).eject(Long.MAX_VALUE);
        assertThat(b.pick()).isNull();
        // the registry re-publishes the same providers (a weight change): their state stays
        b.applyDiscovered(List.of(provider(1, 50, 0), provider(2, 100, 0)), wall);
        assertThat(host(b, 1).health()).isEqualTo(io.sluice.core.cluster.HealthStatus.UNHEALTHY);
        assertThat(host(b, 2).ejected()).isTrue();
        assertThat(b.pick()).isNull();
        host(b, 2).uneject();
        assertThat(b.pick()).isSameAs(host(b, 2));
    }

    @Test
    void aReloadKeepsTheDiscoveredHosts() {
        ClusterBalancer b = ClusterBalancer.create(cluster(null), ctx);
        b.applyDiscovered(List.of(provider(1, 100, 0), provider(2, 100, 0)), wall);
        b.update(cluster(null).toBuilder().panicThreshold(0).build());
        assertThat(b.hosts()).extracting(Host::port).containsExactly(1, 2);
        assertThat(b.config().panicThreshold()).isZero();
    }

    // ---- a provider's own warm-up (SOFARPC warmupTime / warmupWeight) ------------------------------

    private static DiscoveredHost warming(int port, int weight, long startMillis, long warmupMillis, int warmupWeight) {
        return new DiscoveredHost("127.0.0.1", port, weight, startMillis, "zookeeper", warmupMillis, warmupWeight);
    }

    @Test
    void aProvidersWarmupTimeAndWarmupWeightReplaceTheClustersWindowAndFloor() {
        // cluster: window 60 s, floor 10 %. Provider 1: weight 200, warmupTime 20 s, warmupWeight 50 (floor 25 %),
        // started 2 s ago. Provider 2: no warm-up of its own, started 2 s ago -> the cluster's 60 s ramp.
        ClusterBalancer b = ClusterBalancer.create(cluster(Duration.ofSeconds(60)), ctx);
        b.applyDiscovered(List.of(warming(1, 200, wall - 2_000, 20_000, 50), provider(2, 100, wall - 2_000)), wall);
        Host own = host(b, 1);
        Host cl = host(b, 2);
        assertThat(own.warmUp().windowNanos()).isEqualTo(20_000_000_000L);
        assertThat(b.effectiveWeight(own)).isCloseTo(50.0, within(0.001));   // 2/20 = 0.10 < floor 0.25 -> 50
        assertThat(b.effectiveWeight(cl)).isCloseTo(10.0, within(0.001));    // 2/60 < 0.10 -> 10
        advanceSeconds(8);  // 10 s after start
        clock.runDue();
        assertThat(b.effectiveWeight(own)).isCloseTo(100.0, within(0.001));  // 10/20 x 200
        assertThat(b.warmUpFactor(own)).isCloseTo(0.5, within(1e-6));
        // traffic at this instant follows 100 : 100 x 10/60
        int[] c = Counts.batch(b, 1400);
        assertThat(c[0]).isBetween(1199, 1201);
        assertThat(c[1]).isBetween(199, 201);
        advanceSeconds(5);  // 15 s
        clock.runDue();
        assertThat(b.effectiveWeight(own)).isCloseTo(150.0, within(0.001));
        advanceSeconds(5);  // 20 s: the provider's window is over, the cluster's is not
        clock.runDue();
        assertThat(b.effectiveWeight(own)).isEqualTo(200.0);
        assertThat(own.warmStartNanos()).isEqualTo(Host.NOT_WARMING);
        assertThat(b.effectiveWeight(cl)).isCloseTo(100.0 * 20 / 60, within(0.001));
        advanceSeconds(40); // 60 s
        clock.runDue();
        assertThat(b.effectiveWeight(cl)).isEqualTo(100.0);
    }

    @Test
    void withoutSlowStartOnTheClusterAProviderWithWarmupTimeStillRampsFromItsWarmupWeight() {
        // spec acceptance 9: weight 100, warmupTime 60 s, warmupWeight 10 -> 10/25/50/75/100 at 3/15/30/45/60 s
        ClusterBalancer b = ClusterBalancer.create(cluster(null), ctx);
        long start = wall - 3_000;
        b.applyDiscovered(List.of(warming(1, 100, start, 60_000, 10), provider(2, 100, wall - 1_000)), wall);
        Host h = host(b, 1);
        assertThat(b.effectiveWeight(host(b, 2))).isEqualTo(100.0); // no window of its own, none on the cluster
        assertThat(host(b, 2).warmStartNanos()).isEqualTo(Host.NOT_WARMING);
        double[] expected = {10, 25, 50, 75};
        for (int k = 0; k < expected.length; k++) {
            assertThat(b.effectiveWeight(h)).as("at %d s", k == 0 ? 3 : 15 * k).isCloseTo(expected[k], within(0.001));
            advanceSeconds(k == 0 ? 12 : 15);
            clock.runDue();
        }
        assertThat(b.effectiveWeight(h)).isEqualTo(100.0);
        assertThat(h.warmStartNanos()).isEqualTo(Host.NOT_WARMING);
        // warmupTime without warmupWeight: the floor is the (default) 10 %; a later gateway sees the same
        ClusterBalancer other = ClusterBalancer.create(cluster(null), new LbContext(new ManualScheduler(55L), new SplittableRandom(3)));
        other.applyDiscovered(List.of(warming(1, 100, wall - 30_000, 60_000, -1)), wall);
        assertThat(other.effectiveWeight(other.hosts().get(0))).isCloseTo(50.0, within(0.001));
        assertThat(other.hosts().get(0).warmUp().ownFloor()).isFalse();
    }

    @Test
    void changedWarmUpParametersWithTheSameStartTimeDoNotRestartTheRamp() {
        ClusterBalancer b = ClusterBalancer.create(cluster(null), ctx);
        long start = wall;
        b.applyDiscovered(List.of(warming(1, 100, start, 40_000, 10)), wall);
        Host h = host(b, 1);
        advanceSeconds(20);
        clock.runDue();
        assertThat(b.effectiveWeight(h)).isCloseTo(50.0, within(0.001));
        // re-registered with weight 400 and warmupWeight 300 (same startTime): 20/40 < 300/400 -> 300, no restart
        b.applyDiscovered(List.of(warming(1, 400, start, 40_000, 300)), wall);
        assertThat(host(b, 1)).isSameAs(h);
        assertThat(b.effectiveWeight(h)).isCloseTo(300.0, within(0.001));
        // the window shrinks to 10 s: 20 s have passed -> warm
        b.applyDiscovered(List.of(warming(1, 400, start, 10_000, 300)), wall);
        assertThat(b.effectiveWeight(h)).isEqualTo(400.0);
        assertThat(h.warmStartNanos()).isEqualTo(Host.NOT_WARMING);
        // warmupWeight above weight counts as weight (Sluice only ramps up)
        b.applyDiscovered(List.of(warming(2, 100, wall, 60_000, 500)), wall);
        assertThat(b.effectiveWeight(host(b, 2))).isEqualTo(100.0);
    }
}
