package io.sluice.lb;

import io.sluice.core.cluster.HealthStatus;
import io.sluice.core.cluster.Host;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.HashLbConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.LbPolicy;
import io.sluice.core.config.SlowStartConfig;
import io.sluice.core.time.ManualScheduler;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

class HashPickerTest {

    private static final int KEYS = 10_000;

    private final ManualScheduler clock = new ManualScheduler();
    private final LbContext ctx = new LbContext(clock, new SplittableRandom(1)).withPrePicks(LbContext.PrePicks.NONE);

    private static List<HostConfig> hosts(int n) {
        List<HostConfig> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(HostConfig.parse("10.0.0." + (i + 1) + ":8080", 1));
        }
        return out;
    }

    private static long[] keys() {
        long[] k = new long[KEYS];
        for (int i = 0; i < KEYS; i++) {
            k[i] = Hashing.hash("session-" + i);
        }
        return k;
    }

    private ClusterBalancer balancer(LbPolicy lb, List<HostConfig> hosts) {
        return ClusterBalancer.create(ClusterConfig.builder().name("c").lb(lb).hosts(hosts).panicThreshold(0).build(), ctx);
    }

    private static Map<Long, String> assign(ClusterBalancer b, long[] keys) {
        Map<Long, String> m = new HashMap<>();
        for (long k : keys) {
            m.put(k, b.pick(k).address());
        }
        return m;
    }

    @ParameterizedTest
    @EnumSource(value = LbPolicy.class, names = {"RING_HASH", "MAGLEV"})
    void sameKeySameHostAndAnEvenSpread(LbPolicy lb) {
        ClusterBalancer b = balancer(lb, hosts(3));
        long[] keys = keys();
        Map<String, Integer> spread = new HashMap<>();
        for (long k : keys) {
            Host h = b.pick(k);
            assertThat(b.pick(k)).isSameAs(h);
            spread.merge(h.address(), 1, Integer::sum);
        }
        assertThat(spread).hasSize(3);
        spread.values().forEach(c -> assertThat(c).isBetween(KEYS / 3 - 700, KEYS / 3 + 700));
    }

    @ParameterizedTest
    @EnumSource(value = LbPolicy.class, names = {"RING_HASH", "MAGLEV"})
    void aFourthHostTakesAboutAQuarterOfTheKeysAndOnlyThose(LbPolicy lb) {
        long[] keys = keys();
        ClusterBalancer b = balancer(lb, hosts(3));
        Map<Long, String> before = assign(b, keys);
        b.update(b.config().withHosts(hosts(4)));
        Map<Long, String> after = assign(b, keys);
        int moved = 0;
        int movedElsewhere = 0;
        for (long k : keys) {
            if (!before.get(k).equals(after.get(k))) {
                moved++;
                if (!after.get(k).equals("10.0.0.4:8080")) {
                    movedElsewhere++;
                }
            }
        }
        double share = (double) moved / KEYS;
        assertThat(share).as("share of keys moved").isBetween(0.15, 0.35);
        // ring hash moves keys only to the new host; maglev may shuffle a few others
        assertThat((double) movedElsewhere / KEYS).isLessThan(lb == LbPolicy.RING_HASH ? 0.0001 : 0.05);
        // and back: removing it restores the old assignment exactly
        b.update(b.config().withHosts(hosts(3)));
        assertThat(assign(b, keys)).isEqualTo(before);
    }

    @ParameterizedTest
    @EnumSource(value = LbPolicy.class, names = {"RING_HASH", "MAGLEV"})
    void anUnhealthyHostIsSkippedAndOnlyItsKeysMove(LbPolicy lb) {
        long[] keys = keys();
        ClusterBalancer b = balancer(lb, hosts(3));
        Map<Long, String> before = assign(b, keys);
        Host down = b.hosts().get(1);
        down.health(HealthStatus.UNHEALTHY);
        for (long k : keys) {
            Host h = b.pick(k);
            assertThat(h).isNotSameAs(down);
            if (!before.get(k).equals(down.address())) {
                assertThat(h.address()).isEqualTo(before.get(k));
            }
        }
        down.health(HealthStatus.HEALTHY);
        assertThat(assign(b, keys)).isEqualTo(before);
    }

    @ParameterizedTest
    @EnumSource(value = LbPolicy.class, names = {"RING_HASH", "MAGLEV"})
    void weightsShareTheKeys(LbPolicy lb) {
        List<HostConfig> hs = List.of(HostConfig.parse("10.0.0.1:80", 1), HostConfig.parse("10.0.0.2:80", 3));
        ClusterBalancer b = balancer(lb, hs);
        int heavy = 0;
        for (long k : keys()) {
            heavy += b.pick(k).address().equals("10.0.0.2:80") ? 1 : 0;
        }
        assertThat(heavy).isBetween(7000, 8000);
    }

    @ParameterizedTest
    @EnumSource(value = LbPolicy.class, names = {"RING_HASH", "MAGLEV"})
    void aWarmingHostTakesItsKeysGraduallyAndKeepsThem(LbPolicy lb) {
        long[] keys = keys();
        ClusterConfig cfg = ClusterConfig.builder().name("c").lb(lb).hosts(hosts(3)).panicThreshold(0)
                .slowStart(new SlowStartConfig(Duration.ofSeconds(100), 1.0, 0.1)).build();
        ClusterBalancer b = ClusterBalancer.create(cfg, ctx);
        b.update(cfg.withHosts(hosts(4))); // the new host warms up from now
        Host fresh = b.hosts().get(3);
        int[] owned = new int[4];
        double[] at = {0, 25, 50, 100};
        Map<Long, Boolean> onFresh = new HashMap<>();
        for (int step = 0; step < at.length; step++) {
            clock.advanceNanos((long) ((at[step] - (step == 0 ? 0 : at[step - 1])) * 1e9));
            for (long k : keys) {
                boolean mine = b.pick(k) == fresh;
                owned[step] += mine ? 1 : 0;
                if (Boolean.TRUE.equals(onFresh.get(k))) {
                    assertThat(mine).as("a key the warming host took stays there").isTrue();
                }
                onFresh.put(k, mine);
            }
        }
        int full = owned[3];
        assertThat(full).isBetween(1500, 3500); // ≈ 1/4 once warm
        assertThat(owned[0]).isBetween((int) (full * 0.05), (int) (full * 0.15)); // 10 % floor
        assertThat(owned[1]).isBetween((int) (full * 0.18), (int) (full * 0.32)); // 25 s of 100 s
        assertThat(owned[2]).isBetween((int) (full * 0.42), (int) (full * 0.58));
    }

    @ParameterizedTest
    @EnumSource(value = LbPolicy.class, names = {"RING_HASH", "MAGLEV"})
    void withoutAKeyPicksAnyAvailableHost(LbPolicy lb) {
        ClusterBalancer b = balancer(lb, hosts(3));
        b.hosts().get(0).health(HealthStatus.UNHEALTHY);
        Map<String, Integer> seen = new HashMap<>();
        for (int i = 0; i < 300; i++) {
            seen.merge(b.pick().address(), 1, Integer::sum);
            assertThat(b.pick(Hashing.NO_KEY)).isNotSameAs(b.hosts().get(0));
        }
        assertThat(seen).hasSize(2);
    }

    @ParameterizedTest
    @EnumSource(value = LbPolicy.class, names = {"RING_HASH", "MAGLEV"})
    void allHostsDownGivesNullWithoutPanic(LbPolicy lb) {
        ClusterBalancer b = balancer(lb, hosts(2));
        b.hosts().forEach(h -> h.health(HealthStatus.UNHEALTHY));
        assertThat(b.pick(Hashing.hash("k"))).isNull();
    }

    @org.junit.jupiter.api.Test
    void ringSizeFollowsTheConfig() {
        Host[] hs = {new Host(HostConfig.parse("10.0.0.1:80", 1)), new Host(HostConfig.parse("10.0.0.2:80", 1))};
        RingHashPicker small = new RingHashPicker(hs, new double[] {1, 1}, new HashLbConfig(16, 64, 65537), null,
                clock.ticker(), new ThreadRandom(1));
        assertThat(small.slots()).isEqualTo(32); // min_ring_size per unit of weight
        RingHashPicker capped = new RingHashPicker(hs, new double[] {1, 127}, new HashLbConfig(1024, 1280, 65537), null,
                clock.ticker(), new ThreadRandom(1));
        assertThat(capped.slots()).isEqualTo(1280); // 10 points per unit to stay within max_ring_size
        MaglevPicker m = new MaglevPicker(hs, new double[] {1, 1}, 251, null, clock.ticker(), new ThreadRandom(1));
        assertThat(m.slots()).isEqualTo(251);
    }
}
