package io.sluice.lb;

import io.sluice.core.cluster.HealthStatus;
import io.sluice.core.cluster.Host;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.HealthCheckConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.LbPolicy;
import io.sluice.core.config.SlowStartConfig;
import io.sluice.core.time.ManualScheduler;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

class ClusterBalancerTest {

    private final ManualScheduler clock = new ManualScheduler();
    private final RecordingListener events = new RecordingListener();
    private final LbContext ctx = new LbContext(clock, new SplittableRandom(1))
            .withPrePicks(LbContext.PrePicks.NONE).withListener(events);

    private static List<HostConfig> weights(int... w) {
        List<HostConfig> hosts = new ArrayList<>();
        for (int i = 0; i < w.length; i++) {
            hosts.add(HostConfig.parse("127.0.0.1:" + (8080 + i), w[i]));
        }
        return hosts;
    }

    private static ClusterConfig panicThreshold(ClusterConfig c, int pct) {
        return c.toBuilder().panicThreshold(pct).build();
    }

    private void advanceSeconds(double s) {
        clock.advanceNanos((long) (s * 1e9));
    }

    @Test
    void skipsUnavailableHostsAndReturnsNullWhenNoneIsLeft() {
        // panic threshold 0: never balance over unavailable hosts
        ClusterBalancer b = ClusterBalancer.create(panicThreshold(ClusterConfig.of("c", weights(1, 1)), 0), ctx);
        Host first = b.hosts().get(0);
        first.health(HealthStatus.UNHEALTHY);
        for (int i = 0; i < 5; i++) {
            assertThat(b.pick()).isSameAs(b.hosts().get(1));
        }
        b.hosts().get(1).eject(Long.MAX_VALUE);
        assertThat(b.pick()).isNull();
        assertThat(b.panicking()).isFalse();
    }

    @Test
    void aHeavyUnhealthyHostDoesNotStarveHealthyOnes() {
        ClusterBalancer b = ClusterBalancer.create(ClusterConfig.of("c", weights(128, 1, 2)), ctx); // MOSN #1867
        b.hosts().get(0).health(HealthStatus.UNHEALTHY);
        int[] c = Counts.batch(b, 3000);
        assertThat(c[0]).isZero();
        assertThat(c[1]).isBetween(999, 1001);
        assertThat(c[2]).isBetween(1999, 2001);
    }

    @Test
    void contextConveniences() {
        LbContext prod = LbContext.of(clock);
        assertThat(prod.prePicks()).isSameAs(LbContext.PrePicks.RANDOM);
        assertThat(prod.listener()).isSameAs(ClusterBalancer.Listener.NOOP);
        assertThat(prod.probes()).isNull();
        SplittableRandom r = new SplittableRandom(9);
        for (int i = 0; i < 100; i++) {
            assertThat(LbContext.PrePicks.RANDOM.count(5, r)).isBetween(0, 4);
        }
        assertThat(LbContext.PrePicks.RANDOM.count(1, r)).isZero();
        ClusterBalancer b = ClusterBalancer.create(ClusterConfig.of("c", weights(1, 2, 3)), prod);
        int[] c = Counts.batch(b, 600); // random phase: within ±1 of whole cycles
        assertThat(c[0]).isBetween(99, 101);
        assertThat(c[1]).isBetween(199, 201);
        assertThat(c[2]).isBetween(299, 301);
    }

    @Test
    void emptyClusterPicksNothing() {
        assertThat(ClusterBalancer.create(ClusterConfig.of("c", List.of()), ctx).pick()).isNull();
    }

    @Test
    void weightedRoundRobinIsExactOverWholeCycles() {
        ClusterBalancer b = ClusterBalancer.create(ClusterConfig.of("c", weights(1, 2, 3)), ctx);
        List<Host> h = b.hosts();
        List<Host> first = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            first.add(b.pick());
        }
        assertThat(first).containsExactly(h.get(2), h.get(1), h.get(2), h.get(0), h.get(1), h.get(2));
        assertThat(Counts.batch(b, 594)).containsExactly(99, 198, 297);
        assertThat(Counts.batch(b, 600)).containsExactly(100, 200, 300);
        assertThat(Counts.batch(b, 100)).containsExactly(17, 33, 50);
    }

    @Test
    void configuredWeightsAreClampedBeforeUse() {
        ClusterBalancer b = ClusterBalancer.create(ClusterConfig.of("c", weights(0, 1000)), ctx);
        assertThat(Counts.batch(b, 129 * 10)).containsExactly(10, 1280);
        assertThat(b.effectiveWeight(b.hosts().get(1))).isEqualTo(128.0);
    }

    @Test
    void equalWeightsRotateAndPrePicksShiftTheStart() {
        ClusterBalancer b = ClusterBalancer.create(ClusterConfig.of("c", weights(2, 2, 2)), ctx);
        List<Host> h = b.hosts();
        assertThat(List.of(b.pick(), b.pick(), b.pick(), b.pick())).containsExactly(h.get(0), h.get(1), h.get(2), h.get(0));
        ClusterBalancer shifted = ClusterBalancer.create(ClusterConfig.of("c", weights(1, 2, 3)),
                ctx.withPrePicks(LbContext.PrePicks.fixed(1)));
        assertThat(shifted.pick()).isSameAs(shifted.hosts().get(1)); // 8082 was the throw-away pick
        assertThat(Counts.batch(shifted, 599)).containsExactly(100, 199, 300);
    }

    @Test
    void roundRobinIgnoresWeightsAndRandomFollowsThem() {
        ClusterBalancer rr = ClusterBalancer.create(ClusterConfig.of("c", weights(1, 3)).withLb(LbPolicy.ROUND_ROBIN), ctx);
        assertThat(Counts.batch(rr, 1000)).containsExactly(500, 500);
        ClusterBalancer random = ClusterBalancer.create(ClusterConfig.of("c", weights(1, 3)).withLb(LbPolicy.RANDOM), ctx);
        int[] c = Counts.batch(random, 40_000);
        assertThat(c[0] / 40_000.0).isCloseTo(0.25, within(0.01));
    }

    @Test
    void randomAppliesTheWarmUpFactor() {
        ClusterBalancer b = ClusterBalancer.create(ClusterConfig.of("c", weights(1, 1))
                .withLb(LbPolicy.RANDOM).withSlowStart(SlowStartConfig.of(Duration.ofSeconds(30))), ctx);
        b.update(b.config().withHosts(weights(1, 1, 1)));
        advanceSeconds(15); // factor 0.5: shares 2:2:1
        int[] c = Counts.batch(b, 50_000);
        assertThat(c[2] / 50_000.0).isCloseTo(0.2, within(0.01));
    }

    @Test
    void weightOneHostsWarmUpToo() {
        ClusterBalancer b = ClusterBalancer.create(ClusterConfig.of("c", weights(1, 1))
                .withSlowStart(SlowStartConfig.of(Duration.ofSeconds(30))), ctx);
        b.update(b.config().withHosts(weights(1, 1, 1)));
        Host added = b.hosts().get(2);
        advanceSeconds(10);
        assertThat(b.warmUpFactor(added)).isCloseTo(1.0 / 3, within(1e-12));
        assertThat(b.effectiveWeight(added)).isCloseTo(1.0 / 3, within(1e-12)); // no clamp back to 1 (MOSN clamps it back)
        // the added host was queued at t = 0 with 0.1 (deadline 10 ahead): the first picks pay for that
        // stale deadline (a deadline keeps the weight it was queued with), after which its share follows the factor
        Counts.batch(b, 70);
        int[] c = Counts.batch(b, 700); // weights 1 : 1 : 1/3
        assertThat(c[2]).isBetween(99, 101);
        advanceSeconds(20); // window over: plain rotation again
        assertThat(b.warmUpFactor(added)).isEqualTo(1.0);
        assertThat(Counts.batch(b, 300)).containsExactly(100, 100, 100);
    }

    @Test
    void tinyWeightHostIsNotStarvedAfterTheWindow() {
        ClusterBalancer b = ClusterBalancer.create(ClusterConfig.of("c", weights(128, 128))
                .withSlowStart(new SlowStartConfig(Duration.ofSeconds(10), 1, 0.01)), ctx);
        b.update(b.config().withHosts(weights(128, 128, 1)));
        int during = 0;
        for (int s = 0; s < 10; s++) { // traffic during the window, at its smallest weights
            during += Counts.batch(b, 100)[2];
            advanceSeconds(1);
        }
        assertThat(during).isLessThanOrEqualTo(3);
        for (int cycle = 0; cycle < 3; cycle++) { // after the window: every full cycle is exact
            assertThat(Counts.batch(b, 257)).containsExactly(128, 128, 1);
        }
    }

    @Test
    void manyHostsWarmingAtOnce() {
        int[] ten = new int[10];
        Arrays.fill(ten, 1);
        ClusterBalancer b = ClusterBalancer.create(ClusterConfig.of("c", weights(ten))
                .withSlowStart(SlowStartConfig.of(Duration.ofSeconds(30))), ctx);
        int[] twenty = new int[20];
        Arrays.fill(twenty, 1);
        b.update(b.config().withHosts(weights(twenty)));
        advanceSeconds(15); // new hosts at 0.5: total weight 15, 1500 picks = 100 cycles
        Counts.batch(b, 150); // flush the deadlines queued at 0.1 when they were added
        int[] c = Counts.batch(b, 1500);
        for (int i = 0; i < 20; i++) {
            assertThat(c[i]).as("host %d", i).isBetween(i < 10 ? 99 : 49, i < 10 ? 101 : 51);
        }
        // all warming together (warm-up at boot): identical factors keep the configured ratio
        ClusterBalancer boot = ClusterBalancer.create(ClusterConfig.builder().name("b").hosts(weights(1, 2, 3))
                .slowStart(SlowStartConfig.of(Duration.ofSeconds(30))).warmUpAtBoot(true).build(), ctx);
        assertThat(boot.warmUpFactor(boot.hosts().get(0))).isEqualTo(0.1);
        assertThat(Counts.batch(boot, 600)).containsExactly(100, 200, 300);
    }

    @Test
    void reloadKeepsHealthAndWarmUpClockOfKeptAddresses() {
        ClusterBalancer b = ClusterBalancer.create(ClusterConfig.of("c", weights(1))
                .withSlowStart(SlowStartConfig.of(Duration.ofSeconds(30))), ctx);
        Host kept = b.hosts().get(0);
        assertThat(kept.warmStartNanos()).isEqualTo(Host.NOT_WARMING); // boot hosts start warm
        b.update(b.config().withHosts(weights(1, 2)));
        Host added = b.hosts().get(1);
        long t0 = added.warmStartNanos();
        assertThat(t0).isEqualTo(clock.nanoTime());
        kept.health(HealthStatus.UNHEALTHY);
        advanceSeconds(12);
        b.update(b.config().withHosts(weights(5, 2, 3)));
        assertThat(b.hosts().get(0)).isSameAs(kept);
        assertThat(kept.weight()).isEqualTo(5);
        assertThat(kept.health()).isEqualTo(HealthStatus.UNHEALTHY);
        assertThat(b.hosts().get(1)).isSameAs(added);
        assertThat(added.warmStartNanos()).isEqualTo(t0);
        assertThat(b.warmUpFactor(added)).isCloseTo(0.4, within(1e-12));
        assertThat(b.hosts().get(2).warmStartNanos()).isEqualTo(clock.nanoTime());
        b.update(b.config().withHosts(weights(5)));
        assertThat(b.hosts()).containsExactly(kept);
    }

    @Test
    void panicModeBalancesOverAllHosts() {
        FakeProbe probe = new FakeProbe();
        HealthCheckConfig hc = HealthCheckConfig.builder().interval(Duration.ofSeconds(1)).timeout(Duration.ofSeconds(1))
                .healthyThreshold(1).unhealthyThreshold(1).build();
        ClusterBalancer b = ClusterBalancer.create(ClusterConfig.of("c", weights(1, 1, 1, 1)).withHealthCheck(hc),
                ctx.withProbes(c -> probe));
        clock.runDue();
        probe.set("127.0.0.1:8080", FakeProbe.Mode.DOWN).set("127.0.0.1:8081", FakeProbe.Mode.DOWN);
        advanceSeconds(1); // 2 of 4 available = 50 %: not below the threshold
        assertThat(b.panicking()).isFalse();
        assertThat(Counts.batch(b, 100)).containsExactly(0, 0, 50, 50);
        probe.set("127.0.0.1:8082", FakeProbe.Mode.DOWN);
        advanceSeconds(1); // 25 %: panic
        assertThat(b.panicking()).isTrue();
        assertThat(Counts.batch(b, 100)).containsExactly(25, 25, 25, 25);
        probe.set("127.0.0.1:8080", FakeProbe.Mode.UP);
        advanceSeconds(1);
        assertThat(b.panicking()).isFalse();
        assertThat(events.events).containsSubsequence("c panic true", "c panic false");
    }

    @Test
    void leastRequestPrefersIdleHosts() {
        ClusterBalancer two = ClusterBalancer.create(ClusterConfig.of("c", weights(1, 1)).withLb(LbPolicy.LEAST_REQUEST), ctx);
        for (int i = 0; i < 5; i++) {
            two.hosts().get(0).requestStarted();
        }
        assertThat(Counts.batch(two, 100)).containsExactly(0, 100);

        int[] ones = new int[10];
        Arrays.fill(ones, 1);
        ClusterBalancer ten = ClusterBalancer.create(ClusterConfig.of("c", weights(ones)).withLb(LbPolicy.LEAST_REQUEST), ctx);
        for (int i = 0; i < 5; i++) {
            ten.hosts().get(i).requestStarted();
        }
        int[] c = Counts.batch(ten, 10_000);
        int busy = c[0] + c[1] + c[2] + c[3] + c[4];
        assertThat(busy / 10_000.0).isCloseTo(0.25, within(0.02)); // both choices busy: 1/4

        // weighted: weight 3 with 2 in flight weighs 3 / (2 + 1) = 1, like the idle weight-1 host
        ClusterBalancer weighted = ClusterBalancer.create(ClusterConfig.of("c", weights(1, 3)).withLb(LbPolicy.LEAST_REQUEST), ctx);
        weighted.hosts().get(1).requestStarted();
        weighted.hosts().get(1).requestStarted();
        assertThat(weighted.effectiveWeight(weighted.hosts().get(1))).isEqualTo(1.0);
        int[] w = Counts.batch(weighted, 1000);
        assertThat(w[0]).isBetween(499, 501);
    }

    @Test
    void healthCheckWithoutProbeFactoryFailsFast() {
        ClusterConfig c = ClusterConfig.of("c", weights(1)).withHealthCheck(HealthCheckConfig.of("tcp"));
        assertThatThrownBy(() -> ClusterBalancer.create(c, ctx))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("HealthProbe.Factory");
    }

    @Test
    void fourThreadsShareOneSchedulerWithExactRatios() throws Exception {
        ClusterBalancer b = ClusterBalancer.create(ClusterConfig.of("c", weights(1, 2, 3)), ctx);
        List<Host> hosts = b.hosts();
        int threads = 4;
        int perThread = 100_000;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<long[]>> results = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            results.add(pool.submit(() -> {
                long[] c = new long[3];
                start.await();
                for (int i = 0; i < perThread; i++) {
                    Host h = b.pick();
                    c[h == hosts.get(0) ? 0 : h == hosts.get(1) ? 1 : 2]++;
                }
                return c;
            }));
        }
        start.countDown();
        long[] total = new long[3];
        for (Future<long[]> f : results) {
            long[] c = f.get(60, TimeUnit.SECONDS);
            for (int i = 0; i < 3; i++) {
                total[i] += c[i];
            }
        }
        pool.shutdown();
        long n = (long) threads * perThread;
        assertThat(total[0] + total[1] + total[2]).isEqualTo(n);
        assertThat(total[0]).isBetween(n / 6 - 1, n / 6 + 1); // one scheduler: exact up to the last cycle
        assertThat(total[1]).isBetween(n / 3 - 1, n / 3 + 1);
        assertThat(total[2]).isBetween(n / 2 - 1, n / 2 + 1);
    }
}
