package io.sluice.lb;

import io.sluice.core.cluster.Host;
import io.sluice.core.cluster.Outcome;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.OutlierConfig;
import io.sluice.core.config.SlowStartConfig;
import io.sluice.core.time.ManualScheduler;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class OutlierEjectionTest {

    private final ManualScheduler clock = new ManualScheduler();
    private final RecordingListener events = new RecordingListener();
    private final LbContext ctx = new LbContext(clock, new SplittableRandom(5))
            .withPrePicks(LbContext.PrePicks.NONE).withListener(events);

    private ClusterBalancer balancer(int hosts, OutlierConfig outlier) {
        List<HostConfig> list = new ArrayList<>();
        for (int i = 0; i < hosts; i++) {
            list.add(HostConfig.parse("127.0.0.1:" + (8080 + i), 1));
        }
        return ClusterBalancer.create(ClusterConfig.of("c", list).withOutlier(outlier)
                .withSlowStart(SlowStartConfig.of(Duration.ofSeconds(30))), ctx);
    }

    private static void fail(ClusterBalancer b, Host h, Outcome o, int times) {
        for (int i = 0; i < times; i++) {
            b.onOutcome(h, o);
        }
    }

    @Test
    void consecutiveFailuresEjectAndTheHostReturnsWarmingUp() {
        ClusterBalancer b = balancer(4, new OutlierConfig(3, true, Duration.ofSeconds(10), Duration.ofSeconds(25), 50));
        Host h = b.hosts().get(0);
        fail(b, h, Outcome.CONNECT_FAILURE, 2);
        b.onOutcome(h, Outcome.SUCCESS); // resets
        fail(b, h, Outcome.RESET, 2);
        assertThat(h.ejected()).isFalse();
        b.onOutcome(h, Outcome.SERVER_ERROR); // 5xx counted
        assertThat(h.ejected()).isTrue();
        assertThat(h.ejectedUntilNanos()).isEqualTo(Duration.ofSeconds(10).toNanos());
        assertThat(Counts.batch(b, 300)).containsExactly(0, 100, 100, 100);

        clock.advance(Duration.ofSeconds(10));
        assertThat(h.ejected()).isFalse();
        assertThat(h.warmStartNanos()).isEqualTo(clock.nanoTime()); // returns with slow start
        assertThat(b.warmUpFactor(h)).isEqualTo(0.1);
        assertThat(events.events).containsExactly("c 127.0.0.1:8080 ejected 10s #1", "c 127.0.0.1:8080 returned");

        // second ejection: 2 × base; third: capped at max
        fail(b, h, Outcome.TIMEOUT, 3);
        assertThat(h.ejectedUntilNanos() - clock.nanoTime()).isEqualTo(Duration.ofSeconds(20).toNanos());
        clock.advance(Duration.ofSeconds(20));
        fail(b, h, Outcome.TIMEOUT, 3);
        assertThat(h.ejectedUntilNanos() - clock.nanoTime()).isEqualTo(Duration.ofSeconds(25).toNanos());
        assertThat(b.ejections(h)).isEqualTo(3);
    }

    @Test
    void fiveHundredsCountOnlyWhenConfigured() {
        ClusterBalancer b = balancer(2, new OutlierConfig(2, false, Duration.ofSeconds(10), Duration.ofSeconds(10), 100));
        Host h = b.hosts().get(0);
        fail(b, h, Outcome.SERVER_ERROR, 5);
        assertThat(h.ejected()).isFalse();
        b.onOutcome(h, Outcome.CONNECT_FAILURE);
        b.onOutcome(h, Outcome.SERVER_ERROR); // not counted: resets like a response
        b.onOutcome(h, Outcome.CONNECT_FAILURE);
        assertThat(h.ejected()).isFalse();
        b.onOutcome(h, Outcome.CONNECT_FAILURE);
        assertThat(h.ejected()).isTrue();
    }

    @Test
    void neverMoreThanMaxEjectionPercentButAtLeastOne() {
        ClusterBalancer b = balancer(10, new OutlierConfig(1, true, Duration.ofSeconds(10), Duration.ofSeconds(10), 20));
        for (Host h : b.hosts()) {
            b.onOutcome(h, Outcome.CONNECT_FAILURE);
        }
        assertThat(b.hosts().stream().filter(Host::ejected).count()).isEqualTo(2);

        ClusterBalancer small = balancer(3, new OutlierConfig(1, true, Duration.ofSeconds(10), Duration.ofSeconds(10), 10));
        for (Host h : small.hosts()) {
            small.onOutcome(h, Outcome.CONNECT_FAILURE);
        }
        assertThat(small.hosts().stream().filter(Host::ejected).count()).isEqualTo(1);
    }

    @Test
    void ejectionsCountTowardsPanic() {
        ClusterBalancer b = balancer(2, new OutlierConfig(1, true, Duration.ofSeconds(10), Duration.ofSeconds(10), 100));
        b.onOutcome(b.hosts().get(0), Outcome.RESET);
        assertThat(b.panicking()).isFalse(); // 1 of 2 = 50 %
        b.onOutcome(b.hosts().get(1), Outcome.RESET);
        assertThat(b.panicking()).isTrue();
        assertThat(b.pick()).isNotNull();
        clock.advance(Duration.ofSeconds(10));
        assertThat(b.panicking()).isFalse();
        assertThat(b.effectiveWeight(b.hosts().get(0))).isCloseTo(0.1, within(1e-12));
    }

    @Test
    void reloadKeepsEjectionsOfKeptHostsAndOutcomesOfUnknownHostsAreIgnored() {
        ClusterBalancer b = balancer(2, new OutlierConfig(1, true, Duration.ofSeconds(10), Duration.ofSeconds(100), 100));
        Host h = b.hosts().get(0);
        b.onOutcome(h, Outcome.RESET);
        b.update(b.config().withHosts(List.of(HostConfig.parse("127.0.0.1:8080", 1), HostConfig.parse("127.0.0.1:9999", 1))));
        assertThat(h.ejected()).isTrue();
        clock.advance(Duration.ofSeconds(10));
        assertThat(h.ejected()).isFalse();
        b.onOutcome(h, Outcome.RESET);
        assertThat(h.ejectedUntilNanos() - clock.nanoTime()).isEqualTo(Duration.ofSeconds(20).toNanos());
        b.onOutcome(new Host(HostConfig.parse("10.0.0.1:1", 1)), Outcome.RESET); // not in the cluster
        b.update(b.config().withOutlier(null));
        clock.advance(Duration.ofSeconds(20));
        assertThat(h.ejected()).isFalse(); // a running ejection still ends
        b.onOutcome(h, Outcome.RESET);
        assertThat(h.ejected()).isFalse(); // off
    }

    @Test
    void theEjectionMultiplierDecaysWhileTheHostServesWell() {
        // base 10 s, max 100 s, one ejection forgiven per 60 s in service
        ClusterBalancer b = balancer(2, new OutlierConfig(1, true, Duration.ofSeconds(10), Duration.ofSeconds(100), 100,
                Duration.ofSeconds(60)));
        Host h = b.hosts().get(0);
        for (int k = 1; k <= 3; k++) { // ejected for 10, 20, 30 s, each time right after returning
            b.onOutcome(h, Outcome.RESET);
            assertThat(h.ejectedUntilNanos() - clock.nanoTime()).isEqualTo(Duration.ofSeconds(10L * k).toNanos());
            clock.advance(Duration.ofSeconds(10L * k));
            assertThat(h.ejected()).isFalse();
        }
        assertThat(b.ejections(h)).isEqualTo(3);
        clock.advance(Duration.ofSeconds(59));
        assertThat(b.ejections(h)).isEqualTo(3); // not a whole decay step yet
        clock.advance(Duration.ofSeconds(1));
        assertThat(b.ejections(h)).isEqualTo(2);
        b.onOutcome(h, Outcome.RESET); // count 2 + 1: 30 s instead of 40 s
        assertThat(h.ejectedUntilNanos() - clock.nanoTime()).isEqualTo(Duration.ofSeconds(30).toNanos());
        clock.advance(Duration.ofSeconds(30));
        clock.advance(Duration.ofSeconds(60 * 3 + 30)); // three whole steps in service: 3 -> 0
        assertThat(b.ejections(h)).isZero();
        b.onOutcome(h, Outcome.RESET);
        assertThat(h.ejectedUntilNanos() - clock.nanoTime()).isEqualTo(Duration.ofSeconds(10).toNanos()); // base again
        assertThat(b.ejections(h)).isEqualTo(1);
    }

    @Test
    void decayDefaultsToTheBaseEjectionTime() {
        assertThat(new OutlierConfig(3, true, Duration.ofSeconds(7), Duration.ofSeconds(70), 10).ejectionDecay())
                .isEqualTo(Duration.ofSeconds(7));
        assertThat(OutlierConfig.defaults().ejectionDecay()).isEqualTo(Duration.ofSeconds(30));
    }
}
